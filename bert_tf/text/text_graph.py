"""FullTokenizer as TensorFlow ops (tensorflow-text), for models that take raw text.

`InGraphTokenizer` reproduces `tokenization.FullTokenizer` step by step with ops that a
SavedModel carries, so TF Serving can tokenize: invalid UTF-8 dropped; control characters
dropped and whitespace mapped to spaces (`_clean_text`); spaces around CJK ideographs;
lower-casing, NFD and accent stripping (uncased models only); splits at whitespace and at
every punctuation character; words of more than 200 characters become [UNK]; greedy
longest-match-first WordPiece. tests/test_text_graph.py compares both on the original's
tokenization cases (tests/fixtures/tokenization/cases.jsonl).

Why not tensorflow-text's own `BertTokenizer`: it does not drop control characters, case-folds
instead of lower-casing, and counts a word's length in bytes, so it differs from the original
on text that the original handles (google-research/bert's tokenization is the reference).
`packing` mirrors `bert_tf.text.packing`: [CLS] A [SEP] (B [SEP]) with the original's truncation.
"""

from __future__ import annotations

import os
import uuid
import weakref

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.io import filesystem
from bert_tf.tokenization import load_vocab, require_tokens

# As tokenization.py: what is_punctuation counts (ASCII non-alphanumerics, any \p{P}) and
# what is_chinese_char counts.
PUNCTUATION = r"[!-/:-@\[-`{-~]|\p{P}"
CJK = (
    r"[\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2B73F}"
    r"\x{2B740}-\x{2B81F}\x{2B820}-\x{2CEAF}\x{F900}-\x{FAFF}\x{2F800}-\x{2FA1F}]"
)
# After cleaning every whitespace character is a space, except the line and paragraph
# separators, which Python's str.split() (the original's whitespace_tokenize) also splits at.
_SPACES = r"[ \x{2028}\x{2029}]+"
MAX_INPUT_CHARS_PER_WORD = 200


def normalized_vocab_file(vocab_file: str, directory: str) -> tuple[str, dict[str, int]]:
    """Writes the vocab as `load_vocab` reads it (each line stripped) to directory/vocab.txt
    (the table is keyed by whole lines); returns that path and the token -> id map.

    Raises:
        InputError: the vocab has a token twice (`load_vocab`).
    """
    ids = load_vocab(vocab_file)
    path = os.path.join(directory, "vocab.txt")
    with filesystem.open_file(path, "w") as f:
        f.write("".join(token + "\n" for token in ids))
    return path, dict(ids)


class _NamedFileInitializer(tf.lookup.TextFileInitializer):
    """A TextFileInitializer whose table is named `shared_name`. TensorFlow names a file's
    table after str(the file argument), for an Asset its memory address, which a later
    tokenizer can reuse: two tokenizers in one process then share one table, the first's
    vocab. (Not an anonymous table instead: a TF1 Session, which is how TF Serving runs an
    export, makes an anonymous table anew at every run, uninitialized.)"""

    def __init__(self, shared_name: str, *args, **kwargs) -> None:
        self._own_shared_name = shared_name
        super().__init__(*args, **kwargs)

    @property
    def _shared_name(self) -> str:
        return self._own_shared_name


def vocab_table(vocab_asset, token_to_id: bool) -> tf.lookup.StaticHashTable:
    """The vocab file `vocab_asset` (a token a line) as a table: token -> id (-1 if absent),
    or id -> token ([UNK] if absent), named uniquely (`_NamedFileInitializer`)."""
    line, number = tf.lookup.TextFileIndex.WHOLE_LINE, tf.lookup.TextFileIndex.LINE_NUMBER
    key, value = (line, number) if token_to_id else (number, line)
    key_dtype, value_dtype = (tf.string, tf.int64) if token_to_id else (tf.int64, tf.string)
    initializer = _NamedFileInitializer(
        f"bert_tf_vocab_{uuid.uuid4().hex}", vocab_asset, key_dtype, key, value_dtype, value
    )
    return tf.lookup.StaticHashTable(initializer, default_value=-1 if token_to_id else "[UNK]")


class InGraphTokenizer(tf.Module):
    """Raw text -> WordPiece ids, and packing into BERT's inputs, as TensorFlow ops.

    The vocab becomes a SavedModel asset (a normalized copy: `normalized_vocab_file`).

    Args:
        vocab_file: the vocab.txt of the model.
        do_lower_case: as FullTokenizer's.
    """

    def __init__(self, vocab_file: str, do_lower_case: bool = True) -> None:
        super().__init__(name="tokenizer")
        # In TensorFlow's in-process file system, not on a disk (a TPU VM's may be small; the
        # run's own folders may all be gs://). The asset must exist until tf.saved_model.save
        # copies it; the copy goes with the module.
        self._scratch = f"ram://bert_tf_vocab_{uuid.uuid4().hex}"
        filesystem.makedirs(self._scratch)
        weakref.finalize(self, filesystem.rmtree, self._scratch)
        normalized, vocab = normalized_vocab_file(vocab_file, self._scratch)
        self.vocab_asset = tf.saved_model.Asset(normalized)
        self.do_lower_case = do_lower_case
        self.vocab_table = vocab_table(self.vocab_asset, token_to_id=True)
        self._wordpiece = tf_text.WordpieceTokenizer(
            self.vocab_table,
            suffix_indicator="##",
            # Long words are caught by characters below; this byte limit must not bite first.
            max_bytes_per_word=4 * MAX_INPUT_CHARS_PER_WORD,
            token_out_type=tf.int64,
            unknown_token="[UNK]",
            split_unknown_characters=False,
        )
        require_tokens(vocab, vocab_file, ("[CLS]", "[SEP]", "[UNK]"))
        self.cls_id, self.sep_id, self.unk_id = vocab["[CLS]"], vocab["[SEP]"], vocab["[UNK]"]

    def basic_tokenize(self, text):
        """[N] strings -> [N, (words)] strings: BasicTokenizer's words."""
        text = tf.strings.unicode_transcode(
            text, "UTF-8", "UTF-8", errors="ignore"
        )  # convert_to_unicode(errors="ignore")
        # _clean_text: whitespace becomes a space, then NUL, U+FFFD and Cc/Cf characters go.
        text = tf.strings.regex_replace(text, r"[\t\n\r\p{Zs}]", " ")
        text = tf.strings.regex_replace(text, r"[\p{Cc}\p{Cf}\x{FFFD}]", "")
        text = tf.strings.regex_replace(text, f"({CJK})", r" \1 ")
        if self.do_lower_case:
            text = tf.strings.lower(text, encoding="utf-8")
            text = tf_text.normalize_utf8(text, "NFD")
            text = tf.strings.regex_replace(text, r"\p{Mn}", "")
        return tf_text.regex_split(
            text,
            delim_regex_pattern=f"{_SPACES}|{PUNCTUATION}",
            keep_delim_regex_pattern=PUNCTUATION,
        )

    def tokenize(self, text):
        """[N] strings -> [N, (wordpieces)] int64 ids, as FullTokenizer's ids."""
        words = self.basic_tokenize(text)  # [N, (words)]
        too_long = tf.strings.length(words.flat_values, unit="UTF8_CHAR") > MAX_INPUT_CHARS_PER_WORD
        words = words.with_flat_values(tf.where(too_long, "[UNK]", words.flat_values))
        pieces = self._wordpiece.tokenize(words)  # [N, (words), (pieces)]
        return pieces.merge_dims(1, 2)

    def pack(self, ids_a, ids_b, seq_length: int, to_longest: bool = False) -> dict:
        """[N, (tokens)] ids of A (and B, rows may be empty) -> input_ids, input_mask,
        segment_ids [N, seq_length] int32: `[CLS] A [SEP] (B [SEP])`, truncated as
        `packing.truncate_seq_pair` (pop from the end of the longer; ties go to B).

        `to_longest`: padded only to the longest packed row, [N, <= seq_length]: the same
        outputs at the real positions (padding is masked out of attention) for less work."""
        len_a = ids_a.row_lengths()
        len_b = ids_b.row_lengths() if ids_b is not None else tf.zeros_like(len_a)
        # Room for tokens: 3 specials with a B, 2 without.
        room = tf.where(len_b > 0, seq_length - 3, seq_length - 2)
        room = tf.cast(room, len_a.dtype)
        keep_b = tf.minimum(len_b, tf.maximum(room - len_a, room // 2))
        keep_a = tf.minimum(len_a, room - keep_b)
        ids_a = _keep_first(ids_a, keep_a)
        n = tf.shape(len_a, out_type=tf.int64)[0]
        cls = tf.RaggedTensor.from_row_lengths(
            tf.fill([n], tf.constant(self.cls_id, tf.int64)), tf.ones([n], tf.int64)
        )
        sep = tf.RaggedTensor.from_row_lengths(
            tf.fill([n], tf.constant(self.sep_id, tf.int64)), tf.ones([n], tf.int64)
        )
        first = tf.concat([cls, ids_a, sep], axis=1)
        if ids_b is None:
            ids = first
            segments = tf.zeros_like(first)
        else:
            ids_b = _keep_first(ids_b, keep_b)
            has_b = tf.cast(keep_b > 0, tf.int64)
            sep_b = tf.RaggedTensor.from_row_lengths(
                tf.repeat(tf.constant(self.sep_id, tf.int64), tf.reduce_sum(has_b)), has_b
            )
            second = tf.concat([ids_b, sep_b], axis=1)
            ids = tf.concat([first, second], axis=1)
            segments = tf.concat([tf.zeros_like(first), tf.ones_like(second)], axis=1)
        # An empty batch still has room for [CLS] and [SEP]: the model needs a length.
        longest = tf.maximum(ids.bounding_shape(axis=1, out_type=tf.int64), 2)
        shape = tf.stack([-1, longest]) if to_longest else [None, seq_length]
        return {
            "input_ids": tf.cast(ids.to_tensor(0, shape=shape), tf.int32),
            "input_mask": tf.cast(tf.ones_like(ids).to_tensor(0, shape=shape), tf.int32),
            "segment_ids": tf.cast(segments.to_tensor(0, shape=shape), tf.int32),
        }


def _keep_first(ragged, counts):
    """The first counts[i] values of each row i."""
    positions = tf.ragged.range(ragged.row_lengths())
    return tf.ragged.boolean_mask(ragged, positions < counts[:, None])
