"""A question-answering SavedModel for TF Serving: question and context strings in, the
answer text and its score out, computed in the graph as run_squad.py computes them.

    export_squad(model, export_dir, vocab_file=..., max_seq_length=384, ...)

Signatures:
- `serving_default`: `question`, `context` string [batch] -> `answer` string [batch],
  `score` float32 [batch] (start_logit + end_logit of the best span), and for SQuAD 2.0
  `null_odds` float32 [batch] (null score - best span score; the answer is "" when it is
  above the exported --null_score_diff_threshold).
- `serve`: `input_ids`, `input_mask`, `segment_ids` int32 [batch, seq] -> `start_logits`,
  `end_logits` float32 [batch, seq] (the model alone, for clients that featurize).

The raw-text path repeats the original, step for step, with TensorFlow ops: the context is
split into words at whitespace, each word WordPiece-tokenized (`text_graph.InGraphTokenizer`,
whose ids equal FullTokenizer's); long contexts become windows of doc_stride as
`features.doc_spans`, each `[CLS] question [SEP] window [SEP]`; the best span is chosen among
each window's n_best_size starts x ends with the same rules (in the context, max-context
start, length <= max_answer_length), and projected back onto the text as `get_final_text`.
tests/test_run_squad.py checks that it answers as predictions.json does.
"""

from __future__ import annotations

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.serving import export_model
from bert_tf.text_graph import InGraphTokenizer
from bert_tf.windows import graph_is_max_context

# As data.is_whitespace: where the original splits a context into words.
_CONTEXT_WHITESPACE = r"[ \t\r\n\x{202F}]+"
_NO_SCORE = float("-inf")
_ZERO = tf.constant([0], tf.int64)  # padding, so that gathers of an empty context stay in range


class QuestionAnswerer(tf.Module):
    """Raw question and context strings -> answers, as TensorFlow ops around `model`."""

    def __init__(
        self,
        model,
        vocab_file: str,
        do_lower_case: bool,
        max_seq_length: int,
        doc_stride: int,
        max_query_length: int,
        n_best_size: int,
        max_answer_length: int,
        version_2_with_negative: bool,
        null_score_diff_threshold: float,
    ) -> None:
        super().__init__(name="question_answerer")
        self.model = model
        self.tokenizer = InGraphTokenizer(vocab_file, do_lower_case=do_lower_case)
        self.id_to_token = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(
                self.tokenizer.vocab_asset,
                key_dtype=tf.int64,
                key_index=tf.lookup.TextFileIndex.LINE_NUMBER,
                value_dtype=tf.string,
                value_index=tf.lookup.TextFileIndex.WHOLE_LINE,
            ),
            default_value="[UNK]",
        )
        self.seq_length = max_seq_length
        self.doc_stride = doc_stride
        self.max_query_length = max_query_length
        self.n_best_size = min(n_best_size, max_seq_length)
        self.max_answer_length = max_answer_length
        self.version_2_with_negative = version_2_with_negative
        self.null_score_diff_threshold = null_score_diff_threshold

    # Over 60 lines: the original's post-processing as one graph, step for step, kept whole.
    def answer(self, question, context) -> dict:
        """question, context: [B] strings -> {answer [B] string, score [B] float32
        (, null_odds [B] float32)}.

        Shapes: B = batch, W = words, T = context pieces, Q = question pieces, N = windows
        of the whole batch, J = most windows of one example, S = max_seq_length,
        K = n_best_size."""
        words = tf_text.regex_split(context, _CONTEXT_WHITESPACE)  # [B, (W)]
        word_pieces = self.tokenizer.tokenize(words.flat_values)  # [sum W, (pieces)]
        pieces_per_example = tf.reduce_sum(words.with_flat_values(word_pieces.row_lengths()), 1)
        doc = tf.RaggedTensor.from_row_lengths(
            word_pieces.flat_values, pieces_per_example
        )  # [B, (T)]
        # Each piece's word, counted within its example (the original's tok_to_orig_index).
        tok_to_orig = word_pieces.value_rowids() - tf.gather(
            words.row_starts(), doc.value_rowids()
        )  # [sum T]
        query = self.tokenizer.tokenize(question)[:, : self.max_query_length]  # [B, (Q)]

        # The windows (features.doc_spans): as long as the room allows, doc_stride apart.
        doc_length, query_length = doc.row_lengths(), query.row_lengths()  # [B]
        room = self.seq_length - query_length - 3
        stride = tf.minimum(room, self.doc_stride)
        extra = tf.maximum(doc_length - room, 0)
        num_windows = 1 + (extra + stride - 1) // stride  # [B]
        window_example = tf.repeat(tf.range(tf.size(num_windows, tf.int64)), num_windows)  # [N]
        window_index = tf.ragged.range(num_windows).flat_values  # [N]: k-th of its example
        window_start = window_index * tf.gather(stride, window_example)  # [N]
        window_length = tf.minimum(
            tf.gather(doc_length, window_example) - window_start, tf.gather(room, window_example)
        )  # [N]
        first_piece = tf.gather(doc.row_starts(), window_example) + window_start  # [N]
        window_pieces = tf.gather(
            doc.flat_values, tf.ragged.range(first_piece, first_piece + window_length)
        )  # [N, (window_length)]
        features = self._pack(tf.gather(query, window_example), window_pieces)
        outputs = self.model(features, training=False)
        start_logits = tf.cast(outputs["start_logits"], tf.float32)  # [N, S]
        end_logits = tf.cast(outputs["end_logits"], tf.float32)  # [N, S]

        # Each window's K best starts and ends (ties: the lower position, as the original).
        start_values, start_positions = tf.math.top_k(start_logits, self.n_best_size)  # [N, K]
        end_values, end_positions = tf.math.top_k(end_logits, self.n_best_size)
        offset = tf.gather(query_length, window_example) + 2  # [N]: [CLS] query [SEP]

        def in_context(positions):  # [N, K] -> [N, K] bool
            i = tf.cast(positions, tf.int64) - offset[:, None]
            return (i >= 0) & (i < window_length[:, None])

        start_ok = in_context(start_positions) & graph_is_max_context(
            tf.cast(start_positions, tf.int64) - offset[:, None] + window_start[:, None],
            window_example,
            window_index,
            window_start,
            window_length,
            num_windows,
        )
        end_ok = in_context(end_positions)
        length = end_positions[:, None, :] - start_positions[:, :, None] + 1  # [N, K, K]
        valid = (
            start_ok[:, :, None]
            & end_ok[:, None, :]
            & (length >= 1)
            & (length <= self.max_answer_length)
        )
        # float64 sums, as the original's Python floats (the ranking of near-ties depends on it).
        pair_score = (
            tf.cast(start_values, tf.float64)[:, :, None]
            + tf.cast(end_values, tf.float64)[:, None, :]
        )
        pair_score = tf.reshape(tf.where(valid, pair_score, _NO_SCORE), [-1])  # [N * K * K]
        # The best pair of each example; among equal scores the first in the original's
        # order (window, then start rank, then end rank).
        pairs_per_window = self.n_best_size * self.n_best_size
        pair_example = tf.repeat(window_example, pairs_per_window)
        best_score, best_pair = _first_max(pair_score, pair_example, tf.size(num_windows))
        has_span = best_score > _NO_SCORE
        best_pair = tf.where(has_span, best_pair, 0)
        first_window = tf.cumsum(num_windows, exclusive=True)  # [B]
        best_window = first_window + best_pair // pairs_per_window  # [B], an index into N
        start_rank = best_pair % pairs_per_window // self.n_best_size
        end_rank = best_pair % self.n_best_size
        best_window_offset = tf.gather(offset, best_window)
        best_start_piece = (
            tf.cast(tf.gather_nd(start_positions, tf.stack([best_window, start_rank], 1)), tf.int64)
            - best_window_offset
            + tf.gather(first_piece, best_window)
        )  # [B], an index into doc.flat_values
        best_end_piece = (
            tf.cast(tf.gather_nd(end_positions, tf.stack([best_window, end_rank], 1)), tf.int64)
            - best_window_offset
            + tf.gather(first_piece, best_window)
        )
        text = self._final_text(
            words, doc, tok_to_orig, best_start_piece, best_end_piece, has_span
        )  # [B]
        result = {"score": tf.cast(tf.where(has_span, best_score, 0.0), tf.float32)}
        if not self.version_2_with_negative:
            result["answer"] = tf.where(has_span, text, "")
            return result
        null_scores = tf.cast(start_logits[:, 0], tf.float64) + tf.cast(
            end_logits[:, 0], tf.float64
        )  # [N]
        score_null = tf.math.unsorted_segment_min(null_scores, window_example, tf.size(doc_length))
        null_odds = tf.where(has_span, score_null - best_score, score_null)
        answer_null = ~has_span | (null_odds > self.null_score_diff_threshold)
        result["answer"] = tf.where(answer_null, "", text)
        result["null_odds"] = tf.cast(null_odds, tf.float32)
        return result

    def _pack(self, query, window_pieces) -> dict:
        """[N, (Q)] and [N, (L)] ids -> `[CLS] query [SEP] window [SEP]` as input_ids,
        input_mask, segment_ids [N, S] int32."""
        n = query.nrows()
        ones = tf.ones([n], tf.int64)

        def token(token_id):
            return tf.RaggedTensor.from_row_lengths(
                tf.fill([n], tf.constant(token_id, tf.int64)), ones
            )

        cls, sep = token(self.tokenizer.cls_id), token(self.tokenizer.sep_id)
        first = tf.concat([cls, query, sep], axis=1)
        second = tf.concat([window_pieces, sep], axis=1)
        ids = tf.concat([first, second], axis=1)
        segments = tf.concat([tf.zeros_like(first), tf.ones_like(second)], axis=1)
        shape = [None, self.seq_length]
        return {
            "input_ids": tf.cast(ids.to_tensor(0, shape=shape), tf.int32),
            "input_mask": tf.cast(tf.ones_like(ids).to_tensor(0, shape=shape), tf.int32),
            "segment_ids": tf.cast(segments.to_tensor(0, shape=shape), tf.int32),
        }

    def _final_text(self, words, doc, tok_to_orig, start_piece, end_piece, has_span):
        """postprocess._answer_text in the graph: the pieces de-tokenized, the original
        words of the span, then `get_final_text` (done per answer)."""
        last_piece = tf.maximum(tf.size(doc.flat_values, tf.int64) - 1, 0)
        start_piece = tf.where(has_span, start_piece, 0)
        end_piece = tf.where(has_span, end_piece, 0)
        piece_tokens = self.id_to_token.lookup(
            tf.gather(
                tf.concat([doc.flat_values, _ZERO], 0),
                tf.ragged.range(tf.minimum(start_piece, last_piece), end_piece + 1),
            )
        )  # [B, (span pieces)]
        tok_text = tf.strings.reduce_join(piece_tokens, axis=1, separator=" ")
        tok_text = tf.strings.regex_replace(tf.strings.regex_replace(tok_text, " ##", ""), "##", "")
        padded_orig = tf.concat([tok_to_orig, _ZERO], 0)
        orig_start = tf.gather(padded_orig, start_piece)
        orig_end = tf.gather(padded_orig, end_piece)
        example_words = words.row_starts()  # [B]
        orig_words = tf.gather(
            tf.concat([words.flat_values, [""]], 0),
            tf.ragged.range(example_words + orig_start, example_words + orig_end + 1),
        )
        orig_text = tf.strings.reduce_join(orig_words, axis=1, separator=" ")
        basic = self.tokenizer.basic_tokenize(orig_text)
        tok_orig_text = tf.strings.reduce_join(basic, axis=1, separator=" ")
        return tf.map_fn(
            lambda args: _get_final_text(*args),
            (tok_text, orig_text, tok_orig_text),
            fn_output_signature=tf.string,
        )


def _first_max(values, segment_ids, num_segments):
    """Per segment: the largest value and the position (within the segment) of its first
    occurrence. values [M] float64, segment_ids [M] int64 sorted."""
    best = tf.math.unsorted_segment_max(values, segment_ids, num_segments)  # [B]
    # A segment of -inf only has the dtype's lowest value as its max: make it -inf again.
    best = tf.where(best <= values.dtype.min, tf.constant(_NO_SCORE, values.dtype), best)
    starts = tf.math.unsorted_segment_min(
        tf.range(tf.size(values, tf.int64)), segment_ids, num_segments
    )
    position = tf.range(tf.size(values, tf.int64)) - tf.gather(starts, segment_ids)
    is_best = values == tf.gather(best, segment_ids)
    first = tf.math.unsorted_segment_min(
        tf.where(is_best, position, tf.int64.max), segment_ids, num_segments
    )
    return best, first


def _get_final_text(pred_text, orig_text, tok_text):
    """postprocess.get_final_text for one answer: find the prediction in the basic-tokenized
    words, align that text with the words character for character (spaces aside), and cut
    the prediction's characters out of the words; the words themselves when that fails."""
    parts = tf.strings.split(tok_text, sep=pred_text, maxsplit=1)
    found = (tf.strings.length(pred_text) > 0) & (tf.size(parts) > 1)
    start = tf.strings.length(parts[0], unit="UTF8_CHAR")  # characters before the prediction
    end = start + tf.strings.length(pred_text, unit="UTF8_CHAR") - 1
    orig_chars = tf.strings.unicode_decode(orig_text, "UTF-8")
    tok_chars = tf.strings.unicode_decode(tok_text, "UTF-8")
    orig_non_space = tf.where(orig_chars != 32)[:, 0]  # positions of non-space characters
    tok_is_char = tf.cast(tok_chars != 32, tf.int32)
    aligned = tf.size(orig_non_space) == tf.reduce_sum(tok_is_char)
    size = tf.size(tok_chars)
    start_c, end_c = tf.clip_by_value(start, 0, size - 1), tf.clip_by_value(end, 0, size - 1)
    padded_is_char = tf.concat([tok_is_char, [0]], 0)  # gathers in range when tok_text is ""
    mapped = (
        found
        & aligned
        & (size > 0)
        & (tf.gather(padded_is_char, start_c) > 0)
        & (tf.gather(padded_is_char, end_c) > 0)
    )
    ns_start = tf.reduce_sum(tok_is_char[:start_c])
    ns_end = tf.reduce_sum(tok_is_char[:end_c])
    last = tf.maximum(tf.size(orig_non_space) - 1, 0)
    padded = tf.concat([orig_non_space, _ZERO], 0)
    begin = tf.gather(padded, tf.minimum(ns_start, last))
    finish = tf.gather(padded, tf.minimum(ns_end, last))
    cut = tf.strings.substr(
        orig_text, tf.cast(begin, tf.int32), tf.cast(finish - begin + 1, tf.int32), unit="UTF8_CHAR"
    )
    return tf.where(mapped, cut, orig_text)


def export_squad(model, export_dir: str, **settings) -> str:
    """Writes `model` (a BertSpanLabeler) as a SavedModel with both signatures; `settings`
    are `QuestionAnswerer`'s (the run's featurization and post-processing flags: vocab_file,
    do_lower_case, max_seq_length, doc_stride, max_query_length, n_best_size,
    max_answer_length, version_2_with_negative, null_score_diff_threshold). Returns
    `export_dir`."""
    answerer = QuestionAnswerer(model, **settings)
    return export_model(
        model,
        export_dir,
        lambda outputs: {name: outputs[name] for name in ("start_logits", "end_logits")},
        answerer.answer,
        [
            tf.TensorSpec([None], tf.string, name="question"),
            tf.TensorSpec([None], tf.string, name="context"),
        ],
        {name: value for name, value in settings.items() if name != "vocab_file"},
        modules=[answerer],
    )
