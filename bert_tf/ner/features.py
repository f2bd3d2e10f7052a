"""CoNLL sentences to model inputs: each word's first WordPiece labelled, with as much
document context as fits.

As the paper (Sec. 5.3): the representation of each word's first piece goes to the token
classifier; the other pieces get no label and no loss. "We use maximal document context":
a document's words (or, with `document_context=False`, a sentence's) are WordPiece-tokenized
and cut into windows of `max_seq_length - 2` pieces that start `doc_stride` apart, each packed
as `[CLS] window [SEP]`, as run_squad.py windows a long context (`windows.doc_spans`).
A word that falls in several windows is labelled, and predicted, only in the window where its
first piece has the most context (`windows.is_max_context`), so every word is
counted exactly once and none is dropped, however long its sentence.

Shapes: S = max_seq_length.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from bert_tf.io.tfrecord import RecordSchema, int64_features
from bert_tf.ner.data import Document
from bert_tf.text.windows import doc_spans, is_max_context
from bert_tf.tokenization import FullTokenizer


@dataclasses.dataclass
class InputFeatures:
    """One window."""

    tokens: list[str]  # the packed tokens, unpadded
    input_ids: list[int]  # [S], zero-padded
    input_mask: list[int]  # [S]
    segment_ids: list[int]  # [S], all 0
    label_ids: list[int]  # [S]: the word's label at its labelled position, else 0
    label_mask: list[int]  # [S]: 1 where a word is labelled (its first piece, max context)
    # position -> (sentence number in the file, word number in the sentence)
    word_at: dict[int, tuple[int, int]]


def convert_documents_to_features(
    documents: Sequence[Document],
    labels: Sequence[str],
    tokenizer: FullTokenizer,
    max_seq_length: int,
    doc_stride: int,
    document_context: bool = True,
) -> Iterator[InputFeatures]:
    """Yields every window of every document (or sentence), in order.

    Sentences are numbered in file order across documents (`word_at`)."""
    label_id = {label: i for i, label in enumerate(labels)}
    sentence_number = 0
    for document in documents:
        units = [document.sentences] if document_context else [[s] for s in document.sentences]
        for unit in units:
            pieces: list[str] = []
            word_start: list[int] = []  # first piece of each word of the unit
            words: list[tuple[int, int]] = []  # (sentence number, word number)
            tags: list[str] = []
            for sentence in unit:
                for index, word in enumerate(sentence.words):
                    # A word that tokenizes to nothing (control characters only) still needs
                    # a position to be labelled and predicted at.
                    word_pieces = tokenizer.tokenize(word) or ["[UNK]"]
                    word_start.append(len(pieces))
                    words.append((sentence_number, index))
                    tags.append(sentence.tags[index])
                    pieces.extend(word_pieces)
                sentence_number += 1
            yield from _windows(
                pieces, word_start, words, tags, label_id, tokenizer, max_seq_length, doc_stride
            )


def _windows(pieces, word_start, words, tags, label_id, tokenizer, max_seq_length, doc_stride):
    spans = doc_spans(len(pieces), max_seq_length - 2, doc_stride)
    for span_index, span in enumerate(spans):
        tokens = ["[CLS]", *pieces[span.start : span.start + span.length], "[SEP]"]
        label_ids = [0] * max_seq_length
        label_mask = [0] * max_seq_length
        word_at = {}
        for word, start in enumerate(word_start):
            if span.start <= start < span.start + span.length and is_max_context(
                spans, span_index, start
            ):
                position = start - span.start + 1  # after [CLS]
                label_ids[position] = label_id[tags[word]]
                label_mask[position] = 1
                word_at[position] = words[word]
        input_ids = tokenizer.convert_tokens_to_ids(tokens)
        padding = max_seq_length - len(input_ids)
        yield InputFeatures(
            tokens=tokens,
            input_ids=input_ids + [0] * padding,
            input_mask=[1] * len(input_ids) + [0] * padding,
            segment_ids=[0] * max_seq_length,
            label_ids=label_ids,
            label_mask=label_mask,
            word_at=word_at,
        )


RECORD_NAMES = ("input_ids", "input_mask", "segment_ids", "label_ids", "label_mask")


def record_schema(max_seq_length: int) -> RecordSchema:
    """The records' features: `RECORD_NAMES`, [S] each."""
    return RecordSchema(int64_features(RECORD_NAMES, (max_seq_length,)))


def record_values(feature: InputFeatures) -> dict:
    return {name: getattr(feature, name) for name in RECORD_NAMES}
