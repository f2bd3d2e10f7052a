"""A named-entity SavedModel for TF Serving: raw text in, its entities out, tagged in the
graph as run_ner.py tags a CoNLL-2003 document.

    export_ner(model, export_dir, vocab_file=..., labels=[...], max_seq_length=128, ...)

Signatures:
- `serving_default`: `text` string [batch] (each text one document) -> its entities, in text
  order, padded to the batch's most: `entity_type` string [batch, E] (e.g. "PER"),
  `entity_text` string [batch, E] (the text's own characters), `entity_start`, `entity_end`
  int32 [batch, E] (offsets in Unicode code points, end exclusive: in Python
  `text[start:end] == entity_text`), `num_entities` int32 [batch]; padding "" and -1.
- `serve`: `input_ids`, `input_mask`, `segment_ids` int32 [batch, seq] -> `logits` float32
  [batch, seq, labels] (the model alone, for clients that featurize).
assets.extra/bert_tf.json holds the labels, max_seq_length, doc_stride and do_lower_case.

Words. CoNLL-2003 is tokenized in the Penn Treebank's way, and the model has learned labels
for such words, so raw text is split as CoNLL would (`conll_words`, and `conll_words_in_graph`,
its twin in TensorFlow ops):
- at whitespace (what Python's `str.isspace` counts); a CJK ideograph is a word of its own,
  as BERT's tokenizer puts spaces around it (an unspaced Chinese sentence is not one word);
- punctuation (as tokenization.py counts it: any \\p{P} and every ASCII symbol) at the start
  or end of a whitespace token becomes words of its own, one character each: "(AP)" ->
  "(", "AP", ")"; "Germany." -> "Germany", "."; "said," -> "said", ",";
- punctuation inside a token stays: "1996-08-22", "Bosnia-Herzegovina", "O'Neill";
- an abbreviation keeps its final period: a "." right after a letter that itself follows a
  "." inside the token ("U.S." and "e.g." are one word; "U.S.," is "U.S.", ",").
Each word is a substring of the text, so its offsets are the text's; it is WordPiece-tokenized
afterwards (`text_graph.InGraphTokenizer`, whose ids equal FullTokenizer's), and whatever the
tokenizer normalizes does not move them. The text is decoded as UTF-8 with invalid bytes read
as U+FFFD.

Then exactly as features.py: the pieces of each text are cut into windows of
max_seq_length - 2 pieces, doc_stride apart, each `[CLS] window [SEP]`; the model runs over
all windows of the batch at once; each word takes the argmax label at its first piece in the
window where that piece has the most context; and the entities are read off the labels by
conlleval's rules (`tagging.chunks`: an I-X after O or after another type starts one).
tests/test_ner_serving.py checks all of it against the Python path.
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from bert_tf.ner.tagging import split_tag
from bert_tf.serving.export import export_model
from bert_tf.text.text_graph import CJK, PUNCTUATION, InGraphTokenizer
from bert_tf.text.windows import graph_doc_spans, graph_is_max_context
from bert_tf.tokenization import is_chinese_char, is_punctuation

# What str.isspace() counts: \t-\r, the information separators, NEL and the Unicode separators.
_WHITESPACE = r"[\t-\r\x{1C}-\x{1F}\x{85}\p{Z}]"
_PREFIX_ID = {"O": 0, "B": 1, "I": 2}


def conll_words(text: str) -> list[tuple[str, int, int]]:
    """The words of `text` as CoNLL-2003 would tokenize it (see the module docstring), each
    as (word, start, end) with `text[start:end] == word`.

    >>> [w for w, _, _ in conll_words("(AP) U.S. troops, said O'Neill.")]
    ['(', 'AP', ')', 'U.S.', 'troops', ',', 'said', "O'Neill", '.']
    """
    tokens, start = [], None  # (start, end) of each whitespace token
    for i, char in enumerate(text + " "):
        cjk = is_chinese_char(ord(char))
        if start is not None and (char.isspace() or cjk):
            tokens.append((start, i))
            start = None
        if cjk:
            tokens.append((i, i + 1))
        elif start is None and not char.isspace():
            start = i
    words = []
    for start, end in tokens:
        first = start  # the first character that is not punctuation
        while first < end and is_punctuation(text[first]):
            first += 1
        last = end  # the end of the core word
        while last > first and is_punctuation(text[last - 1]):
            last -= 1
        abbreviation = (
            first < last < end
            and text[last] == "."
            and text[last - 1].isalpha()
            and last - 2 > first
            and text[last - 2] == "."
        )
        last += abbreviation
        words.extend((text[i], i, i + 1) for i in range(start, first))
        if first < last:
            words.append((text[first:last], first, last))
        words.extend((text[i], i, i + 1) for i in range(last, end))
    return words


def conll_words_in_graph(text):
    """`conll_words` of each text, with TensorFlow ops: text [B] string -> (chars [B, (C)],
    words [B, (W)] string, start [B, (W)] int64, end [B, (W)] int64).

    The rule is applied to all characters of the batch at once. Shapes: M = characters of
    the batch, M' = those that are not whitespace, K = whitespace tokens of the batch."""
    chars = tf.strings.unicode_split(text, "UTF-8", errors="replace")  # [B, (C)]
    flat = chars.flat_values  # [M]
    row = chars.value_rowids()  # [M]
    index = tf.range(tf.size(flat, tf.int64))  # [M]
    position = index - tf.gather(chars.row_starts(), row)  # [M]: offset in its text
    space = tf.strings.regex_full_match(flat, _WHITESPACE)
    cjk = tf.strings.regex_full_match(flat, CJK)
    punct = tf.strings.regex_full_match(flat, PUNCTUATION)
    letter = tf.strings.regex_full_match(flat, r"\p{L}")
    period = tf.equal(flat, ".")

    def after(boundary):  # whether the previous character of the text is a `boundary`
        return (position == 0) | tf.concat([[True], boundary[:-1]], 0)

    token_start = ~space & (after(space | cjk) | cjk)  # [M]
    # From here on only the characters of words, M' of them, numbered by `index` still.
    kept = ~space
    index, token_start, position, row = (
        tf.boolean_mask(x, kept) for x in (index, token_start, position, row)
    )  # [M']
    token = tf.cumsum(tf.cast(token_start, tf.int64)) - 1  # [M']
    num_tokens = tf.reduce_sum(tf.cast(token_start, tf.int64))
    core = tf.boolean_mask(~punct, kept)  # [M']
    first, last = _token_cores(index, token, num_tokens, core, period, letter)  # [K]
    first, last = tf.gather(first, token), tf.gather(last, token)  # [M']
    # Leading and trailing punctuation are words of one character; the rest is one word.
    word_start = token_start | (index < first) | (index > last) | (index == first)  # [M']
    word = tf.cumsum(tf.cast(word_start, tf.int64)) - 1  # [M']
    num_words = tf.reduce_sum(tf.cast(word_start, tf.int64))
    word_chars = tf.RaggedTensor.from_value_rowids(
        tf.boolean_mask(flat, kept), word, nrows=num_words
    )  # [sum W, (chars)]
    word_end = tf.math.unsorted_segment_max(position, word, num_words) + 1  # [sum W]

    def by_text(values):  # [sum W] -> [B, (W)]
        return tf.RaggedTensor.from_value_rowids(
            values, tf.boolean_mask(row, word_start), nrows=chars.nrows()
        )

    return (
        chars,
        by_text(tf.strings.reduce_join(word_chars, axis=1)),
        by_text(tf.boolean_mask(position, word_start)),
        by_text(word_end),
    )


def _token_cores(index, token, num_tokens, core, period, letter):
    """Each whitespace token's first and last characters that are not punctuation (by their
    `index` among the batch's characters; no first when all of it is punctuation: then all of
    it is leading), an abbreviation's final period kept in it. index, token, core [M'];
    period, letter [M] -> first, last [K]."""
    first = tf.math.unsorted_segment_min(
        tf.where(core, index, tf.int64.max), token, num_tokens
    )  # [K]
    last = tf.math.unsorted_segment_max(tf.where(core, index, -1), token, num_tokens)  # [K]
    end = tf.math.unsorted_segment_max(index, token, num_tokens) + 1  # [K]

    def at(flags, i):  # flags[i] [K] for indexes that may fall outside the batch's characters
        size = tf.size(flags, tf.int64)
        return (i >= 0) & (i < size) & tf.gather(flags, tf.clip_by_value(i, 0, size - 1))

    # An abbreviation's final period: right after the last letter, itself after an inner ".".
    abbreviation = (
        (last + 1 < end)
        & at(period, last + 1)
        & at(letter, last)
        & (last - 1 > first)
        & at(period, last - 1)
    )
    return first, tf.where(abbreviation, last + 1, last)


class EntityTagger(tf.Module):
    """Raw text -> entities, as TensorFlow ops around `model` (a BertTokenClassifier whose
    logits are over `labels`, IOB2 tags)."""

    def __init__(
        self,
        model,
        vocab_file: str,
        do_lower_case: bool,
        labels: Sequence[str],
        max_seq_length: int,
        doc_stride: int,
    ) -> None:
        super().__init__(name="entity_tagger")
        self.model = model
        self.tokenizer = InGraphTokenizer(vocab_file, do_lower_case=do_lower_case)
        self.seq_length = max_seq_length
        self.doc_stride = doc_stride
        tags = [split_tag(label) for label in labels]  # raises for a label that is not IOB
        types = sorted({chunk_type for _, chunk_type in tags if chunk_type})
        self.types = tf.constant(types or [""])
        self.label_prefix = tf.constant([_PREFIX_ID[p] for p, _ in tags], tf.int32)  # [L]
        # -1 for O: every type differs from it.
        self.label_type = tf.constant([types.index(t) if t else -1 for _, t in tags], tf.int32)

    def tag(self, text) -> dict:
        """text [B] string -> entity_type, entity_text [B, E] string, entity_start,
        entity_end [B, E] int32, num_entities [B] int32.

        Shapes: B = batch, W = words, T = pieces of a text, N = windows of the batch,
        S = max_seq_length, L = labels, E = entities."""
        chars, words, word_start, word_end = conll_words_in_graph(text)  # [B, (W)]
        word_pieces = self._word_pieces(words.flat_values)  # [sum W, (pieces)]
        doc = tf.RaggedTensor.from_row_lengths(
            word_pieces.flat_values,
            tf.reduce_sum(words.with_flat_values(word_pieces.row_lengths()), axis=1),
        )  # [B, (T)]
        piece_word = word_pieces.value_rowids()  # [sum T]: the word of each piece
        is_first = tf.range(tf.size(piece_word, tf.int64)) == tf.gather(
            word_pieces.row_starts(), piece_word
        )  # [sum T]: the word's first piece

        room = self.seq_length - 2  # [CLS] window [SEP]
        windows = graph_doc_spans(doc.row_lengths(), room, self.doc_stride)  # [N] each
        first_piece = tf.gather(doc.row_starts(), windows["example"]) + windows["start"]  # [N]
        window_pieces = tf.gather(
            doc.flat_values, tf.ragged.range(first_piece, first_piece + windows["length"])
        )  # [N, (length)]
        # Padded to the longest window only; the logits are padded back to [N, S, L] (the
        # positions past a window are never labelled).
        features = self.tokenizer.pack(window_pieces, None, self.seq_length, to_longest=True)
        logits = tf.cast(self.model(features, training=False)["logits"], tf.float32)  # [N, S', L]
        padding = self.seq_length - tf.shape(logits)[1]
        logits = tf.pad(logits, [[0, 0], [0, padding], [0, 0]])  # [N, S, L]
        label = tf.argmax(logits, axis=-1, output_type=tf.int32)  # [N, S]

        # As features.py: a position is labelled where a word's first piece is, in the window
        # where that piece has the most context (squad's rule).
        offset = tf.range(self.seq_length, dtype=tf.int64)[None, :] - 1  # [1, S]: after [CLS]
        in_window = (offset >= 0) & (offset < windows["length"][:, None])  # [N, S]
        piece = tf.clip_by_value(
            first_piece[:, None] + offset, 0, tf.maximum(tf.size(piece_word, tf.int64) - 1, 0)
        )  # [N, S]: into doc.flat_values
        labelled = (
            in_window
            & tf.gather(is_first, piece)
            & graph_is_max_context(
                windows["start"][:, None] + offset,
                windows["example"],
                windows["index"],
                windows["start"],
                windows["length"],
                windows["num_windows"],
            )
        )
        labelled_word = tf.boolean_mask(tf.gather(piece_word, piece), labelled)  # [sum W]
        word_label = tf.scatter_nd(
            labelled_word[:, None],
            tf.boolean_mask(label, labelled),
            tf.shape(words.flat_values, out_type=tf.int64),
        )  # [sum W]: each word is labelled in exactly one window
        return self._entities(chars, words, word_start, word_end, word_label)

    def _word_pieces(self, words):
        """[sum W] words -> [sum W, (pieces)] ids; a word that tokenizes to nothing (control
        characters only) is [UNK], as features.py."""
        word_pieces = self.tokenizer.tokenize(words)
        empty = tf.cast(word_pieces.row_lengths() == 0, tf.int64)  # [sum W]
        unk = tf.RaggedTensor.from_row_lengths(
            tf.fill([tf.reduce_sum(empty)], tf.constant(self.tokenizer.unk_id, tf.int64)), empty
        )
        return tf.concat([word_pieces, unk], axis=1)

    def _entities(self, chars, words, word_start, word_end, word_label) -> dict:
        """The words' labels [sum W] -> the entities of each text, by conlleval's rules."""
        prefix = tf.gather(self.label_prefix, word_label)  # [sum W]
        chunk_type = tf.gather(self.label_type, word_label)
        rank = tf.ragged.range(words.row_lengths()).flat_values  # [sum W]: k-th of its text
        first_word = rank == 0
        last_word = rank == tf.gather(words.row_lengths(), words.value_rowids()) - 1
        previous_type = tf.where(first_word, -1, tf.concat([[-1], chunk_type[:-1]], 0))
        # tagging.chunks: B- starts an entity, and so does an I- that does not continue one of
        # its type; an entity ends before a word that starts one or is O, or at the text's end.
        starts = (prefix == _PREFIX_ID["B"]) | (
            (prefix == _PREFIX_ID["I"]) & (previous_type != chunk_type)
        )
        next_starts = tf.concat([starts[1:], [True]], 0)
        next_type = tf.concat([chunk_type[1:], [-1]], 0)
        ends = (chunk_type >= 0) & (last_word | next_starts | (next_type < 0))
        first = tf.where(starts)[:, 0]  # [sum E]: the entities' first words, in order
        last = tf.where(ends)[:, 0]  # and their last words
        entity_row = tf.gather(words.value_rowids(), first)
        start = tf.gather(word_start.flat_values, first)  # [sum E]
        end = tf.gather(word_end.flat_values, last)
        span = tf.gather(chars.row_starts(), entity_row)
        entity_text = tf.strings.reduce_join(
            tf.gather(chars.flat_values, tf.ragged.range(span + start, span + end)), axis=1
        )

        def by_text(values):  # [sum E] -> [B, (E)]
            return tf.RaggedTensor.from_value_rowids(values, entity_row, nrows=chars.nrows())

        return {
            "entity_type": by_text(tf.gather(self.types, tf.gather(chunk_type, first))).to_tensor(
                ""
            ),
            "entity_text": by_text(entity_text).to_tensor(""),
            "entity_start": by_text(tf.cast(start, tf.int32)).to_tensor(-1),
            "entity_end": by_text(tf.cast(end, tf.int32)).to_tensor(-1),
            "num_entities": tf.cast(by_text(first).row_lengths(), tf.int32),
        }


def export_ner(model, export_dir: str, **settings) -> str:
    """Writes `model` (a BertTokenClassifier) as a SavedModel with both signatures; `settings`
    are `EntityTagger`'s (vocab_file, do_lower_case, labels, max_seq_length, doc_stride).
    Returns `export_dir`."""
    tagger = EntityTagger(model, **settings)
    return export_model(
        model,
        export_dir,
        lambda outputs: {"logits": tf.cast(outputs["logits"], tf.float32)},
        tagger.tag,
        [tf.TensorSpec([None], tf.string, name="text")],
        {
            "labels": list(settings["labels"]),
            "max_seq_length": settings["max_seq_length"],
            "doc_stride": settings["doc_stride"],
            "do_lower_case": settings["do_lower_case"],
        },
        modules=[tagger],
    )
