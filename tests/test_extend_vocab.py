"""scripts/extend_vocab.py puts a domain's words into a released vocab in place of its
[unusedN] tokens: every other id stays (the checkpoint still fits), a word the vocab split
becomes one token, and what cannot be done is one line."""

from __future__ import annotations

import pytest
from conftest import UNCASED_VOCAB, run_script

from bert_tf.errors import InputError
from bert_tf.text.vocab_builder import extend_vocab, split_words
from bert_tf.tokenization import FullTokenizer, load_vocab

# A domain the released vocab splits: each word is several WordPiece tokens there.
DOMAIN = (
    "The electroencephalography showed hyperkalemia. Electroencephalography again: hyperkalemia "
    "and tachyarrhythmia.\nA tachyarrhythmia with hyperkalemia, and the patient rested.\n"
)


def extend(tmp_path, *flags: str, fresh: bool = False):
    corpus = tmp_path / "domain.txt"
    corpus.write_text(DOMAIN, encoding="utf-8")
    output = tmp_path / "domain_vocab" / "vocab.txt"
    result = run_script(
        "scripts/extend_vocab.py", f"--vocab_file={UNCASED_VOCAB}", f"--input_file={corpus}",
        f"--output_file={output}", *flags, fresh=fresh,
    )  # fmt: skip
    return result, output


def test_domain_words_take_unused_slots_and_every_other_id_stays(tmp_path):
    result, output = extend(tmp_path, fresh=True)
    assert result.returncode == 0, result.stderr
    before, after = list(load_vocab(UNCASED_VOCAB)), list(load_vocab(output))
    assert len(after) == len(before)  # bert_config.json's vocab_size still fits
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert [before[i] for i in changed] == ["[unused0]", "[unused1]", "[unused2]"]
    # The most frequent first: hyperkalemia 3 times, then the two words seen twice.
    assert [after[i] for i in changed] == [
        "hyperkalemia", "electroencephalography", "tachyarrhythmia",
    ]  # fmt: skip
    tokens = FullTokenizer(output).tokenize("Hyperkalemia, electroencephalography")
    assert tokens == ["hyperkalemia", ",", "electroencephalography"]
    assert len(FullTokenizer(UNCASED_VOCAB).tokenize("Hyperkalemia")) > 1  # it was split
    assert "3 words in place of [unused0]..[unused2] (ids 1-3)" in result.stderr
    assert "fewer)" in result.stderr  # how much shorter the corpus tokenizes


def test_max_words_caps_the_words_added(tmp_path):
    result, output = extend(tmp_path, "--max_words=1")
    assert result.returncode == 0, result.stderr
    assert list(load_vocab(output))[1:3] == ["hyperkalemia", "[unused1]"]


def test_a_words_file_gives_the_words_as_the_model_writes_them(tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("Tachyarrhythmia\n\nmodel\n", encoding="utf-8")  # model: already whole
    result, output = extend(tmp_path, f"--words_file={words}")
    assert result.returncode == 0, result.stderr
    assert list(load_vocab(output))[1:3] == ["tachyarrhythmia", "[unused1]"]
    words.write_text("tachy-arrhythmia\n", encoding="utf-8")
    result, _ = extend(tmp_path, f"--words_file={words}")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"extend_vocab.py: error: --words_file={words}:1: 'tachy-arrhythmia' is 3 words to "
        "BERT's tokenizer (tachy - arrhythmia); expected one word a line (punctuation splits)"
    )


def test_the_models_own_vocab_is_never_written_over(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes(UNCASED_VOCAB.read_bytes())
    result = run_script(
        "scripts/extend_vocab.py", f"--vocab_file={vocab}", f"--output_file={vocab}",
        "--words_file=/dev/null",
    )  # fmt: skip
    assert result.returncode == 1
    assert "is --vocab_file; write the extended vocab elsewhere" in result.stderr
    assert vocab.read_bytes() == UNCASED_VOCAB.read_bytes()


def test_a_vocab_without_unused_slots_is_one_line(tmp_path):
    vocab = tmp_path / "vocab.txt"
    tokens = [t for t in load_vocab(UNCASED_VOCAB) if not t.startswith("[unused")]
    vocab.write_text("".join(t + "\n" for t in tokens), encoding="utf-8")
    words = tmp_path / "words.txt"
    words.write_text("hyperkalemia\n", encoding="utf-8")
    result = run_script(
        "scripts/extend_vocab.py", f"--vocab_file={vocab}", f"--words_file={words}",
        f"--output_file={tmp_path / 'out.txt'}",
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"extend_vocab.py: error: --vocab_file={vocab}: the vocab has no [unusedN] tokens to "
        "replace"
    )
    assert not (tmp_path / "out.txt").exists()
    with pytest.raises(InputError):
        extend_vocab(tokens, ["hyperkalemia"])


def test_only_words_the_vocab_splits_are_candidates():
    vocab = load_vocab(UNCASED_VOCAB)
    counts = {"the": 9, "hyperkalemia": 2, "patient": 5, "zzzqx": 1}
    assert split_words(counts, vocab) == ["hyperkalemia", "zzzqx"]
