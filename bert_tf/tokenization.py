"""WordPiece tokenization, token for token identical to the original BERT's `tokenization.py`.

The public API is the original's (google-research/bert, commit eedf5716):

    tokenizer = FullTokenizer("uncased_L-12_H-768_A-12/vocab.txt", do_lower_case=True)
    tokens = tokenizer.tokenize("UNwantéd,running")  # ["unwanted", ",", "running"]
    ids = tokenizer.convert_tokens_to_ids(tokens)

`FullTokenizer` runs `BasicTokenizer` (clean the text, isolate CJK characters, split on whitespace,
optionally lower-case and strip accents, split off punctuation) and then `WordpieceTokenizer`
(greedy longest-match-first pieces, continuation pieces prefixed with "##") on every token.

Faithfulness comes first: the quirks of the original are kept on purpose, and marked as such.
What is added is for speed only and changes no output: the per-character predicates are memoized,
`WordpieceTokenizer` memoizes the pieces of each word (bounded LRU cache), and a few steps have a
fast path (ASCII text, CJK spacing by regex) that the tests check against the plain definitions.
"""

from __future__ import annotations

import collections
import functools
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import read_lines

# The released checkpoints whose vocabulary was built with / without lower-casing.
_LOWER_CASED_MODELS = frozenset(
    {
        "uncased_L-24_H-1024_A-16",
        "uncased_L-12_H-768_A-12",
        "multilingual_L-12_H-768_A-12",
        "chinese_L-12_H-768_A-12",
    }
)
_CASED_MODELS = frozenset(
    {
        "cased_L-12_H-768_A-12",
        "cased_L-24_H-1024_A-16",
        "multi_cased_L-12_H-768_A-12",
    }
)
# As the original: the "." is not escaped, and the model name is the run of letters, digits, "_"
# and "-" just before the first "/bert_model.ckpt".
_CHECKPOINT_NAME_RE = re.compile(r"^.*?([A-Za-z0-9_-]+)/bert_model.ckpt")

# Distinct words remembered by each WordpieceTokenizer (a word is at most a few hundred bytes).
_WORD_CACHE_SIZE = 1 << 17
# Distinct characters remembered by each memoized per-character predicate.
_CHAR_CACHE_SIZE = 1 << 16


def released_model_do_lower_case(model_name: str) -> bool | None:
    """The `do_lower_case` of the released model `model_name` (`uncased_L-12_H-768_A-12`),
    or None for a name we do not recognise."""
    if model_name in _LOWER_CASED_MODELS:
        return True
    if model_name in _CASED_MODELS:
        return False
    return None


def checkpoint_model_name(init_checkpoint: str | os.PathLike) -> str | None:
    """The model name in a checkpoint path, as the original reads it (`.../NAME/bert_model.ckpt`),
    or the name of a model folder given instead (`.../NAME`)."""
    path = os.fspath(init_checkpoint)
    match = _CHECKPOINT_NAME_RE.match(path)
    if match:
        return match.group(1)
    name = os.path.basename(path.rstrip("/"))
    return name if filesystem.isdir(path) else None


def validate_case_matches_checkpoint(do_lower_case: bool, init_checkpoint: str | None) -> None:
    """Raise if `do_lower_case` contradicts the casing of a known released checkpoint, as the
    original: by its name (a checkpoint in a folder of a released model's name, or that
    folder). Other names (or no checkpoint) are accepted silently. What a model's own files say
    of its casing: `bert_tf.model_io.source.ModelSource.do_lower_case`, which asks this too."""
    if not init_checkpoint:
        return
    model_name = checkpoint_model_name(init_checkpoint)
    expected = released_model_do_lower_case(model_name or "")
    if expected is None or expected == do_lower_case:
        return
    case_name = "lower-cased" if expected else "cased"
    raise InputError(
        f"--do_lower_case={do_lower_case} does not match --init_checkpoint={init_checkpoint}: "
        f"`{model_name}` is a {case_name} model, so pass --do_lower_case={expected} to fine-tune "
        "the way it was pre-trained (if this check is wrong for your checkpoint, remove it)."
    )


def convert_to_unicode(text: str | bytes) -> str:
    """Return `text` as `str`; bytes are decoded as UTF-8, invalid sequences dropped."""
    if isinstance(text, str):
        return text
    if isinstance(text, bytes):
        # As the original: undecodable bytes are silently ignored.
        return text.decode("utf-8", "ignore")
    raise ValueError(f"Unsupported string type: {type(text)}")


def printable_text(text: str | bytes) -> str:
    """Return `text` as a `str` suitable for printing or logging (the same as in Python 3)."""
    return convert_to_unicode(text)


def load_vocab(vocab_file: str | os.PathLike[str]) -> collections.OrderedDict[str, int]:
    """Read a vocabulary: one token per line, its id being its line number (from 0).

    As the original, each line is stripped of surrounding whitespace and a blank line is the
    token "". Unlike the original, which gives a repeated token the id of its last line (and
    every later token's id no longer matches the model's row), a token twice is an error.
    """
    vocab: collections.OrderedDict[str, int] = collections.OrderedDict()
    try:
        for index, line in enumerate(read_lines(vocab_file)):
            token = line.strip()
            if token in vocab:
                raise InputError(
                    f"{os.fspath(vocab_file)}:{index + 1}: token {token!r} already on line "
                    f"{vocab[token] + 1}; a vocab must list each token once (its id is its line)"
                )
            vocab[token] = index
    except FileNotFoundError:
        raise InputError(
            f"vocab file {os.fspath(vocab_file)!r} not found: expected a vocab file with one "
            "WordPiece token per line"
        ) from None
    if not vocab:
        raise InputError(
            f"vocab file {os.fspath(vocab_file)!r} is empty: expected one WordPiece token per line"
        )
    return vocab


def require_tokens(
    vocab: Mapping[str, int], vocab_file: str | os.PathLike[str], tokens: Iterable[str]
) -> None:
    """Raises `InputError` naming `vocab_file` and the `tokens` (e.g. "[CLS]") it lacks."""
    missing = [token for token in tokens if token not in vocab]
    if missing:
        raise InputError(
            f"vocab file {os.fspath(vocab_file)!r} has no {', '.join(missing)}: expected BERT's "
            "special tokens [PAD] [UNK] [CLS] [SEP] [MASK] (create_vocab.py writes them)"
        )


def convert_by_vocab(vocab: Mapping, items: Iterable) -> list:
    """Map every item through `vocab` (a KeyError for an item it lacks, as the original)."""
    return [vocab[item] for item in items]


def convert_tokens_to_ids(vocab: Mapping[str, int], tokens: Iterable[str]) -> list[int]:
    """Map tokens to ids with `vocab`."""
    return convert_by_vocab(vocab, tokens)


def convert_ids_to_tokens(inv_vocab: Mapping[int, str], ids: Iterable[int]) -> list[str]:
    """Map ids to tokens with `inv_vocab`."""
    return convert_by_vocab(inv_vocab, ids)


def whitespace_tokenize(text: str) -> list[str]:
    """Split on runs of whitespace (Python's notion of it), dropping empty pieces."""
    return text.split()


class FullTokenizer:
    """End-to-end tokenization: `BasicTokenizer`, then `WordpieceTokenizer` on each token."""

    def __init__(self, vocab_file: str | os.PathLike[str], do_lower_case: bool = True) -> None:
        self.vocab = load_vocab(vocab_file)
        self.inv_vocab = {index: token for token, index in self.vocab.items()}
        self.basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
        self.wordpiece_tokenizer = WordpieceTokenizer(vocab=self.vocab)

    def tokenize(self, text: str | bytes) -> list[str]:
        """Return the WordPiece tokens of `text`."""
        split_tokens = []
        for token in self.basic_tokenizer.tokenize(text):
            split_tokens.extend(self.wordpiece_tokenizer.tokenize(token))
        return split_tokens

    def convert_tokens_to_ids(self, tokens: Iterable[str]) -> list[int]:
        """Map tokens to ids."""
        return convert_by_vocab(self.vocab, tokens)

    def convert_ids_to_tokens(self, ids: Iterable[int]) -> list[str]:
        """Map ids to tokens."""
        return convert_by_vocab(self.inv_vocab, ids)


class BasicTokenizer:
    """Whitespace and punctuation splitting, with optional lower-casing and accent stripping."""

    def __init__(self, do_lower_case: bool = True) -> None:
        self.do_lower_case = do_lower_case

    def tokenize(self, text: str | bytes) -> list[str]:
        """Return the basic tokens of `text`."""
        text = convert_to_unicode(text)
        text = self._clean_text(text)
        # As the original: CJK ideographs become one token each, for both English and
        # multilingual models (the English vocabularies hold a few of them too).
        text = self._tokenize_chinese_chars(text)
        split_tokens = []
        for token in whitespace_tokenize(text):
            if self.do_lower_case:
                # As the original: accents are stripped only when lower-casing.
                token = self._run_strip_accents(token.lower())
            split_tokens.extend(self._run_split_on_punc(token))
        # As the original: join and split once more (this only drops empty tokens).
        return whitespace_tokenize(" ".join(split_tokens))

    def _run_strip_accents(self, text: str) -> str:
        """Decompose (NFD) and drop the nonspacing marks (category Mn)."""
        if text.isascii():  # Fast path: ASCII text is its own NFD and has no marks.
            return text
        text = unicodedata.normalize("NFD", text)
        return "".join(char for char in text if unicodedata.category(char) != "Mn")

    def _run_split_on_punc(self, text: str) -> list[str]:
        """Split `text` so that every punctuation character is a token of its own."""
        if text.isalnum():  # Fast path: letters and digits are never punctuation.
            return [text]
        output: list[str] = []
        start = 0
        for i, char in enumerate(text):
            if is_punctuation(char):
                if start < i:
                    output.append(text[start:i])
                output.append(char)
                start = i + 1
        if start < len(text):
            output.append(text[start:])
        return output

    def _tokenize_chinese_chars(self, text: str) -> str:
        """Put a space on both sides of every CJK ideograph."""
        return _CJK_CHAR_RE.sub(r" \g<0> ", text)

    def _is_chinese_char(self, cp: int) -> bool:
        """Whether code point `cp` is a CJK ideograph (see `is_chinese_char` below)."""
        return is_chinese_char(cp)

    def _clean_text(self, text: str) -> str:
        """Drop NUL, U+FFFD and control characters; turn every whitespace character into " "."""
        if text.isascii():  # Fast path, same result: a table for the 128 ASCII characters.
            return text.translate(_ASCII_CLEAN_TABLE)
        return "".join(map(_clean_char, text))


class WordpieceTokenizer:
    """Greedy longest-match-first splitting of words into vocabulary pieces."""

    def __init__(
        self,
        vocab: Mapping[str, int],
        unk_token: str = "[UNK]",
        max_input_chars_per_word: int = 200,
    ) -> None:
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word
        # Per instance, so that the cache never outlives or mixes vocabularies. It assumes `vocab`
        # is not modified after construction.
        self._word_pieces = functools.lru_cache(maxsize=_WORD_CACHE_SIZE)(self._split_word)

    def tokenize(self, text: str | bytes) -> list[str]:
        """Return the WordPiece tokens of `text`, which should already be basic-tokenized.

        For example "unaffable" becomes ["un", "##aff", "##able"]. A word longer than
        `max_input_chars_per_word`, or one with any part not in the vocabulary, becomes a single
        `unk_token`.
        """
        output_tokens: list[str] = []
        for word in whitespace_tokenize(convert_to_unicode(text)):
            output_tokens.extend(self._word_pieces(word))
        return output_tokens

    def _split_word(self, word: str) -> tuple[str, ...]:
        if len(word) > self.max_input_chars_per_word:
            return (self.unk_token,)
        pieces = []
        start = 0
        while start < len(word):
            end = len(word)
            piece = None
            while start < end:
                candidate = word[start:end] if start == 0 else "##" + word[start:end]
                if candidate in self.vocab:
                    piece = candidate
                    break
                end -= 1
            if piece is None:
                # As the original: one unmatched remainder turns the whole word into `unk_token`.
                return (self.unk_token,)
            pieces.append(piece)
            start = end
        return tuple(pieces)


def is_chinese_char(cp: int) -> bool:
    """Whether `cp` is in the CJK Unified Ideographs blocks (as the original defines them).

    As the original, Hangul, Hiragana and Katakana are not included: those scripts are written
    with spaces, or handled by WordPiece like any other letters.
    """
    return any(low <= cp <= high for low, high in _CJK_RANGES)


@functools.lru_cache(maxsize=_CHAR_CACHE_SIZE)
def _clean_char(char: str) -> str:
    """What `_clean_text` makes of one character: "", " " or the character itself."""
    if char == "\x00" or char == "\ufffd" or _is_control(char):
        return ""
    return " " if _is_whitespace(char) else char


@functools.lru_cache(maxsize=_CHAR_CACHE_SIZE)
def _is_whitespace(char: str) -> bool:
    """Whether `char` is whitespace: space, tab, newline, carriage return or category Zs."""
    # As the original: \t, \n and \r are control characters but are treated as whitespace.
    if char in " \t\n\r":
        return True
    return unicodedata.category(char) == "Zs"


@functools.lru_cache(maxsize=_CHAR_CACHE_SIZE)
def _is_control(char: str) -> bool:
    """Whether `char` is a control character: category Cc or Cf, except tab, newline, return."""
    # As the original: \t, \n and \r are counted as whitespace instead.
    if char in "\t\n\r":
        return False
    # As the original: only Cc and Cf; unassigned (Cn), private-use (Co) and surrogate (Cs) code
    # points are kept, and usually end up as [UNK].
    return unicodedata.category(char) in ("Cc", "Cf")


@functools.lru_cache(maxsize=_CHAR_CACHE_SIZE)
def is_punctuation(char: str) -> bool:
    """Whether `char` is punctuation: any category "P*", or any non-alphanumeric ASCII symbol."""
    cp = ord(char)
    # As the original: ASCII symbols such as "$", "^", "`" and "+" are not category P in Unicode
    # but are split off as punctuation all the same.
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


# The code point ranges `is_chinese_char` accepts (inclusive), and a regex matching any of them.
_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
_CJK_CHAR_RE = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES) + "]")
_ASCII_CLEAN_TABLE = str.maketrans({chr(cp): _clean_char(chr(cp)) for cp in range(128)})
