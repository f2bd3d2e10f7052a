"""bert_tf.tokenization: the original's unit tests, and token-for-token agreement with the oracle.

The oracle (`tests/fixtures/tokenization/cases.jsonl`) holds what the original google-research/bert
FullTokenizer produced for 573 texts, uncased (`sample_data/vocab.txt`, lower-casing) and cased
(`tests/fixtures/tokenization/cased_test_vocab.txt`, no lower-casing).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CASINGS, tokenization_cases

from bert_tf import tokenization
from bert_tf.errors import InputError

MIXED_CASE = " \tHeLLo!how  \n Are yoU?  "
SMALL_VOCAB = ["[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing"]


def _write_vocab(tmp_path: Path, tokens: list[str]) -> Path:
    path = tmp_path / "vocab.txt"
    path.write_text("".join(token + "\n" for token in tokens), encoding="utf-8")
    return path


# --- The original's unit tests (tokenization_test.py) -------------------------------------------


def test_full_tokenizer(tmp_path: Path) -> None:
    tokenizer = tokenization.FullTokenizer(_write_vocab(tmp_path, SMALL_VOCAB + [","]))
    tokens = tokenizer.tokenize("UNwant\u00e9d,running")
    assert tokens == ["un", "##want", "##ed", ",", "runn", "##ing"]
    assert tokenizer.convert_tokens_to_ids(tokens) == [7, 4, 5, 10, 8, 9]
    assert tokenizer.convert_ids_to_tokens([7, 4, 5, 10, 8, 9]) == tokens


def test_chinese() -> None:
    tokenizer = tokenization.BasicTokenizer()
    assert tokenizer.tokenize("ah\u535a\u63a8zz") == ["ah", "\u535a", "\u63a8", "zz"]


def test_basic_tokenizer_lower() -> None:
    tokenizer = tokenization.BasicTokenizer(do_lower_case=True)
    assert tokenizer.tokenize(MIXED_CASE) == ["hello", "!", "how", "are", "you", "?"]
    assert tokenizer.tokenize("H\u00e9llo") == ["hello"]


def test_basic_tokenizer_no_lower() -> None:
    tokenizer = tokenization.BasicTokenizer(do_lower_case=False)
    assert tokenizer.tokenize(MIXED_CASE) == ["HeLLo", "!", "how", "Are", "yoU", "?"]


def test_wordpiece_tokenizer() -> None:
    vocab = {token: index for index, token in enumerate(SMALL_VOCAB)}
    tokenizer = tokenization.WordpieceTokenizer(vocab=vocab)
    assert tokenizer.tokenize("") == []
    assert tokenizer.tokenize("unwanted running") == ["un", "##want", "##ed", "runn", "##ing"]
    # One unmatched remainder ("X") turns the whole word into [UNK].
    assert tokenizer.tokenize("unwantedX running") == ["[UNK]", "runn", "##ing"]


def test_convert_tokens_to_ids() -> None:
    vocab = {token: index for index, token in enumerate(SMALL_VOCAB)}
    tokens = ["un", "##want", "##ed", "runn", "##ing"]
    assert tokenization.convert_tokens_to_ids(vocab, tokens) == [7, 4, 5, 8, 9]


def test_is_whitespace() -> None:
    for char in [" ", "\t", "\r", "\n", "\u00a0"]:
        assert tokenization._is_whitespace(char), repr(char)
    for char in ["A", "-"]:
        assert not tokenization._is_whitespace(char), repr(char)


def test_is_control() -> None:
    assert tokenization._is_control("\u0005")
    for char in ["A", " ", "\t", "\r", "\U0001f4a9"]:
        assert not tokenization._is_control(char), repr(char)


def test_is_punctuation() -> None:
    for char in ["-", "$", "`", "."]:
        assert tokenization.is_punctuation(char), repr(char)
    for char in ["A", " "]:
        assert not tokenization.is_punctuation(char), repr(char)


# --- Agreement with the original on the oracle cases --------------------------------------------


@pytest.mark.parametrize(
    ("case_name", "vocab_file", "do_lower_case"),
    CASINGS,
)
def test_matches_original_on_oracle_cases(
    case_name: str, vocab_file: Path, do_lower_case: bool
) -> None:
    cases = tokenization_cases()
    assert len(cases) == 573
    # The same public path users take: FullTokenizer.tokenize, then convert_tokens_to_ids.
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case=do_lower_case)
    mismatches = []
    for case in cases:
        tokens = tokenizer.tokenize(case["text"])
        ids = tokenizer.convert_tokens_to_ids(tokens)
        expected = (case[f"{case_name}_tokens"], case[f"{case_name}_ids"])
        if (tokens, ids) != expected:
            mismatches.append(f"{case['text']!r}: got {tokens} expected {expected[0]}")
    assert not mismatches, f"{len(mismatches)} mismatches, first: " + "\n".join(mismatches[:5])


# --- Behaviour of our own: errors, bytes input, vocab loading ------------------------------------


def test_validate_case_matches_checkpoint() -> None:
    with pytest.raises(ValueError, match="uncased_L-12_H-768_A-12"):
        tokenization.validate_case_matches_checkpoint(
            False, "uncased_L-12_H-768_A-12/bert_model.ckpt"
        )
    with pytest.raises(ValueError, match="do_lower_case=True"):
        tokenization.validate_case_matches_checkpoint(
            True, "/models/cased_L-12_H-768_A-12/bert_model.ckpt"
        )
    tokenization.validate_case_matches_checkpoint(True, "uncased_L-12_H-768_A-12/bert_model.ckpt")
    tokenization.validate_case_matches_checkpoint(False, "cased_L-24_H-1024_A-16/bert_model.ckpt")
    tokenization.validate_case_matches_checkpoint(False, "my_model/bert_model.ckpt")
    tokenization.validate_case_matches_checkpoint(True, "/tmp/model.ckpt-1000")
    tokenization.validate_case_matches_checkpoint(False, None)
    tokenization.validate_case_matches_checkpoint(False, "")


def test_missing_vocab_file_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "no_such_vocab.txt"
    with pytest.raises((FileNotFoundError, ValueError), match="no_such_vocab.txt") as excinfo:
        tokenization.FullTokenizer(missing)
    assert "one WordPiece token per line" in str(excinfo.value)


def test_empty_vocab_file_is_an_error(tmp_path: Path) -> None:
    empty = _write_vocab(tmp_path, [])
    with pytest.raises(InputError, match="vocab.txt"):
        tokenization.load_vocab(empty)


def test_load_vocab_ids_are_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[PAD]\n  spaced \r\n\nx\ry\n")
    vocab = tokenization.load_vocab(path)
    # Lines are stripped; a blank line is the token ""; only "\n" ends a line and, as in
    # TensorFlow's GFile that the original reads with, every "\r" is dropped.
    assert list(vocab.items()) == [("[PAD]", 0), ("spaced", 1), ("", 2), ("xy", 3)]


def test_bytes_input_is_decoded_as_utf8() -> None:
    assert tokenization.convert_to_unicode(b"caf\xc3\xa9 \xff!") == "caf\u00e9 !"
    assert tokenization.printable_text(b"abc") == "abc"
    assert tokenization.BasicTokenizer().tokenize("Caf\u00e9".encode()) == ["cafe"]
    with pytest.raises(ValueError):
        tokenization.convert_to_unicode(123)


def test_overlong_word_is_unknown() -> None:
    tokenizer = tokenization.WordpieceTokenizer(
        vocab={"a": 0, "##a": 1}, max_input_chars_per_word=5
    )
    assert tokenizer.tokenize("aaaaa aaaaaa") == ["a", "##a", "##a", "##a", "##a", "[UNK]"]


# --- The fast paths give the same answers as the plain definitions -------------------------------


def test_cjk_regex_matches_is_chinese_char() -> None:
    every_char = "".join(map(chr, range(0x110000)))
    matched = {ord(m.group()) for m in tokenization._CJK_CHAR_RE.finditer(every_char)}
    expected = {cp for cp in range(0x110000) if tokenization.is_chinese_char(cp)}
    assert matched == expected
    assert not tokenization.is_chinese_char(0xAC00)  # Hangul
    assert not tokenization.is_chinese_char(0x3042)  # Hiragana


def test_alphanumeric_characters_are_never_punctuation() -> None:
    # BasicTokenizer._run_split_on_punc returns str.isalnum() tokens whole.
    clashes = [
        hex(cp)
        for cp in range(0x110000)
        if chr(cp).isalnum() and tokenization.is_punctuation.__wrapped__(chr(cp))
    ]
    assert clashes == []


def test_a_vocab_without_the_special_tokens_is_named_with_those_it_lacks(tmp_path: Path) -> None:
    vocab_file = _write_vocab(tmp_path, ["[PAD]", "[UNK]", "[SEP]", "the"])
    vocab = tokenization.load_vocab(vocab_file)
    with pytest.raises(InputError, match=r"vocab.txt' has no \[CLS\], \[MASK\]: expected"):
        tokenization.require_tokens(vocab, vocab_file, ("[CLS]", "[SEP]", "[MASK]"))
    tokenization.require_tokens(vocab, vocab_file, ("[SEP]",))  # one it has


def test_a_vocab_with_a_token_twice_is_refused_where_every_script_loads_it(tmp_path):
    # The original gives "hello" the id 5 and leaves line 5's row unused: every id after a
    # duplicate would then differ from the model's row. Refused in load_vocab, before any work.
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nhello\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        tokenization.FullTokenizer(str(vocab))
    assert str(error.value) == (
        f"{vocab}:6: token 'hello' already on line 5; a vocab must list each token once (its "
        "id is its line)"
    )
