"""A question-answering SavedModel for TF Serving: question and context strings in, the
answer text and its score out, computed in the graph as run_squad.py computes them.

    export_squad(model, export_dir, vocab_file=..., max_seq_length=384, ...)

Signatures:
- `serving_default`: `question`, `context` string [batch] -> `answer` string [batch],
  `score` float32 [batch] (start_logit + end_logit of the best span; SQuAD 1.1 answers
  "empty", the original's placeholder, where no span is valid), and for SQuAD 2.0
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

from bert_tf.serving.export import check_text_pairs, export_model
from bert_tf.text.text_graph import InGraphTokenizer, vocab_table
from bert_tf.text.windows import graph_doc_spans, graph_is_max_context

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
        self.id_to_token = vocab_table(self.tokenizer.vocab_asset, token_to_id=False)
        self.seq_length = max_seq_length
        self.doc_stride = doc_stride
        self.max_query_length = max_query_length
        self.n_best_size = min(n_best_size, max_seq_length)
        self.max_answer_length = max_answer_length
        self.version_2_with_negative = version_2_with_negative
        self.null_score_diff_threshold = null_score_diff_threshold

    def answer(self, question, context) -> dict:
        """question, context: [B] strings -> {answer [B] string, score [B] float32
        (, null_odds [B] float32)}.

        Shapes: B = batch, W = words, T = context pieces, Q = question pieces, N = windows
        of the whole batch, S = max_seq_length, K = n_best_size."""
        question, context = check_text_pairs(
            {"question": question, "context": context}, "one answer each"
        )
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
        windows = self._windows(doc, query.row_lengths())
        window_pieces = tf.gather(
            doc.flat_values,
            tf.ragged.range(windows["first_piece"], windows["first_piece"] + windows["length"]),
        )  # [N, (length)]
        packed = self.tokenizer.pack(
            tf.gather(query, windows["example"]), window_pieces, self.seq_length
        )
        outputs = self.model(packed, training=False)
        start_logits = tf.cast(outputs["start_logits"], tf.float32)  # [N, S]
        end_logits = tf.cast(outputs["end_logits"], tf.float32)  # [N, S]
        best_score, has_span, start_piece, end_piece = self._best_span(
            start_logits, end_logits, windows
        )
        text = self._final_text(words, doc, tok_to_orig, start_piece, end_piece, has_span)  # [B]
        result = {"score": tf.cast(tf.where(has_span, best_score, 0.0), tf.float32)}
        if not self.version_2_with_negative:
            # As the original's predictions.json: "empty" where no span is valid.
            result["answer"] = tf.where(has_span, text, "empty")
            return result
        null_scores = tf.cast(start_logits[:, 0], tf.float64) + tf.cast(
            end_logits[:, 0], tf.float64
        )  # [N]
        score_null = tf.math.unsorted_segment_min(
            null_scores, windows["example"], tf.size(doc.row_lengths())
        )
        null_odds = tf.where(has_span, score_null - best_score, score_null)
        answer_null = ~has_span | (null_odds > self.null_score_diff_threshold)
        result["answer"] = tf.where(answer_null, "", text)
        result["null_odds"] = tf.cast(null_odds, tf.float32)
        return result

    def _windows(self, doc, query_length) -> dict:
        """The windows of `features.doc_spans` for the whole batch: as long as the room beside
        each question allows, doc_stride apart (one, empty, for an empty context). Returns
        `example`, `index` (k-th of its example), `start`, `length`, `offset` (where the
        window begins in its features: after `[CLS] question [SEP]`), `first_piece` (in
        doc.flat_values) [N] and `num_windows` [B]."""
        room = self.seq_length - query_length - 3  # [B]: [CLS] question [SEP] window [SEP]
        windows = graph_doc_spans(doc.row_lengths(), room, self.doc_stride, at_least_one=True)
        example = windows["example"]
        return {
            **windows,
            "offset": tf.gather(query_length, example) + 2,
            "first_piece": tf.gather(doc.row_starts(), example) + windows["start"],
        }

    def _best_span(self, start_logits, end_logits, windows: dict):
        """Each example's best valid span over its windows' n_best_size starts x ends, as the
        original ranks them: (score [B] float64, has_span [B] bool, start and end [B], indices
        into the batch's context pieces)."""
        start_values, start_positions = tf.math.top_k(start_logits, self.n_best_size)  # [N, K]
        end_values, end_positions = tf.math.top_k(end_logits, self.n_best_size)
        offset, length = windows["offset"], windows["length"]

        def in_context(positions):  # [N, K] -> [N, K] bool
            i = tf.cast(positions, tf.int64) - offset[:, None]
            return (i >= 0) & (i < length[:, None])

        start_ok = in_context(start_positions) & graph_is_max_context(
            tf.cast(start_positions, tf.int64) - offset[:, None] + windows["start"][:, None],
            windows["example"], windows["index"], windows["start"], length,
            windows["num_windows"],
        )  # fmt: skip
        span_length = end_positions[:, None, :] - start_positions[:, :, None] + 1  # [N, K, K]
        valid = (
            start_ok[:, :, None]
            & in_context(end_positions)[:, None, :]
            & (span_length >= 1)
            & (span_length <= self.max_answer_length)
        )
        # float64 sums, as the original's Python floats (the ranking of near-ties depends on it).
        pair_score = (
            tf.cast(start_values, tf.float64)[:, :, None]
            + tf.cast(end_values, tf.float64)[:, None, :]
        )
        pair_score = tf.reshape(tf.where(valid, pair_score, _NO_SCORE), [-1])  # [N * K * K]
        # The best pair of each example; among equal scores the first in the original's
        # order (window, then start rank, then end rank).
        per_window = self.n_best_size * self.n_best_size
        num_windows = windows["num_windows"]
        best_score, best_pair = _first_max(
            pair_score, tf.repeat(windows["example"], per_window), tf.size(num_windows)
        )
        has_span = best_score > _NO_SCORE
        best_pair = tf.where(has_span, best_pair, 0)
        best_window = tf.cumsum(num_windows, exclusive=True) + best_pair // per_window  # [B]
        base = tf.gather(windows["first_piece"], best_window) - tf.gather(offset, best_window)

        def piece(positions, rank):  # [B]: the ranked position, as an index into the pieces
            chosen = tf.gather_nd(positions, tf.stack([best_window, rank], 1))
            return tf.cast(chosen, tf.int64) + base

        start = piece(start_positions, best_pair % per_window // self.n_best_size)
        end = piece(end_positions, best_pair % self.n_best_size)
        return best_score, has_span, start, end

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
