"""Windows over texts longer than a model's input, as the original's run_squad.py cuts a
long context into "doc spans", and the rule that predicts each token from one window only:
the one where it has the most context. In Python (featurization) and in TensorFlow ops
(SavedModels that take raw text); SQuAD and NER both use them.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class DocSpan:
    start: int  # index of the window's first piece in the context's pieces
    length: int


def doc_spans(num_tokens: int, max_tokens_for_doc: int, doc_stride: int) -> list[DocSpan]:
    """The sliding windows over `num_tokens` context pieces: each as long as the room allows,
    the next starting `doc_stride` later, the last one reaching the end."""
    spans = []
    start = 0
    while start < num_tokens:
        length = min(num_tokens - start, max_tokens_for_doc)
        spans.append(DocSpan(start, length))
        if start + length == num_tokens:
            break
        start += min(length, doc_stride)
    return spans


def warn_of_long_stride(doc_stride: int, max_tokens_for_doc: int, room: str) -> None:
    """Says when windows of `max_tokens_for_doc` pieces cannot start `doc_stride` apart: as
    the original, each then starts where the one before ended (no overlap), and a word at a
    window's edge is predicted with no context on one side."""
    if doc_stride > max_tokens_for_doc:
        logger.warning(
            "--doc_stride=%d is longer than a window's %d pieces (%s): windows will not "
            "overlap, each starting where the one before ends; a stride of at most half a "
            "window gives every word context on both sides",
            doc_stride, max_tokens_for_doc, room,
        )  # fmt: skip


def is_max_context(spans: Sequence[DocSpan], span_index: int, position: int) -> bool:
    """Whether window `span_index` gives the piece at `position` its most context.

    A piece's context in a window is the smaller of the pieces to its left and to its right
    there (their sum is the window length); 0.01 * length breaks ties towards the longer
    window, and among equal scores the first window wins."""
    best_score = None
    best_index = None
    for index, span in enumerate(spans):
        end = span.start + span.length - 1
        if not span.start <= position <= end:
            continue
        score = min(position - span.start, end - position) + 0.01 * span.length
        if best_score is None or score > best_score:
            best_score, best_index = score, index
    return best_index == span_index


def graph_doc_spans(
    doc_length, max_tokens_for_doc, doc_stride: int, at_least_one: bool = False
) -> dict:
    """`doc_spans` of every document at once: doc_length [B] int64 and the room for tokens
    (one number, or [B] int64: SQuAD's depends on each question) -> the windows of the batch,
    N in all, document by document: `example`, `index` (k-th of its document), `start`,
    `length` [N] int64 and `num_windows` [B]. An empty document has no window, or with
    `at_least_one` one of length 0 (a SavedModel then still runs the model on it)."""
    import tensorflow as tf  # the graph twins only: the options that warn of a stride need none

    room = tf.cast(max_tokens_for_doc, tf.int64) * tf.ones_like(doc_length)  # [B]
    # Every window but the last is as long as the room allows, so they start `stride` apart.
    stride = tf.minimum(room, doc_stride)
    extra = tf.maximum(doc_length - room, 0)
    num_windows = 1 + (extra + stride - 1) // stride  # [B]
    if not at_least_one:
        num_windows = tf.where(doc_length > 0, num_windows, 0)
    example = tf.repeat(tf.range(tf.size(num_windows, tf.int64)), num_windows)  # [N]
    index = tf.ragged.range(num_windows).flat_values  # [N]
    start = index * tf.gather(stride, example)
    length = tf.minimum(tf.gather(doc_length, example) - start, tf.gather(room, example))
    return {
        "example": example,
        "index": index,
        "start": start,
        "length": length,
        "num_windows": num_windows,
    }


def graph_is_max_context(
    piece, window_example, window_index, window_start, window_length, num_windows
):
    """`is_max_context` for each piece [N, K] of each window: whether its
    window (the first among equals) gives it the highest min(left, right) + 0.01 * length
    of all its example's windows that hold it."""
    import tensorflow as tf

    starts = tf.RaggedTensor.from_row_lengths(window_start, num_windows).to_tensor(0)
    lengths = tf.RaggedTensor.from_row_lengths(window_length, num_windows).to_tensor(0)
    starts = tf.gather(starts, window_example)[:, None, :]  # [N, 1, J]
    lengths = tf.gather(lengths, window_example)[:, None, :]
    ends = starts + lengths - 1
    piece = piece[:, :, None]  # [N, K, 1]
    holds = (piece >= starts) & (piece <= ends) & (lengths > 0)  # [N, K, J]
    # float64, as the original's Python floats: exact ties are broken the same way.
    score = tf.cast(tf.minimum(piece - starts, ends - piece), tf.float64) + 0.01 * tf.cast(
        lengths, tf.float64
    )
    score = tf.where(holds, score, float("-inf"))
    best = tf.reduce_max(score, axis=-1, keepdims=True)
    j = tf.range(tf.shape(score, out_type=tf.int64)[-1])
    first_best = tf.reduce_min(tf.where(score == best, j, tf.int64.max), axis=-1)  # [N, K]
    return first_best == window_index[:, None]
