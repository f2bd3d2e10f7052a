"""The SQuAD fine-tuning loss of run_squad.py, in the training loop's sums-and-counts form
(see pretraining/objectives.py), and the records it reads."""

from __future__ import annotations

import tensorflow as tf
from keras import ops

from bert_tf.config import BertConfig
from bert_tf.input_pipeline import record_dataset
from bert_tf.modeling.span_labeler import BertSpanLabeler


def squad_dataset(
    input_file: str, max_seq_length: int, batch_size: int, is_training: bool, seed=None
) -> tf.data.Dataset:
    """Batches of {unique_ids [B], input_ids, input_mask, segment_ids [B, S]} int32, plus
    start_positions, end_positions, is_impossible [B] for training (example_index [B] for
    prediction): the original's feature names."""
    spec = {
        "unique_ids": tf.io.FixedLenFeature([], tf.int64),
        "input_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "input_mask": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
    }
    if is_training:
        for name in ("start_positions", "end_positions", "is_impossible"):
            spec[name] = tf.io.FixedLenFeature([], tf.int64)
    return record_dataset(input_file, spec, batch_size, is_training, seed)


class SpanExtraction:
    """(start loss + end loss) / 2, each the mean over the batch of the softmax
    cross-entropy of the answer's position over all S positions (as the original:
    padding positions are not masked out; an answer outside the window is at [CLS])."""

    count_names = ("features",)
    sum_names = ("loss", "start_accuracy", "end_accuracy")

    def __init__(self, bilstm_units: int | None = None) -> None:
        self.bilstm_units = bilstm_units

    def build_model(self, config: BertConfig) -> BertSpanLabeler:
        return BertSpanLabeler(config, bilstm_units=self.bilstm_units)

    def trainable_variables(self, model: BertSpanLabeler) -> list:
        # The pooler gets no gradient from the span loss: as the original (whose optimizer
        # skips variables without a gradient), it is neither trained nor decayed.
        unused = {id(v) for v in model.encoder.pooler.trainable_variables}
        return [v for v in model.trainable_variables if id(v) not in unused]

    def model_inputs(self, features: dict) -> dict:
        return {name: features[name] for name in ("input_ids", "input_mask", "segment_ids")}

    def prepare(self, features: dict) -> dict:
        return features

    def counts(self, features: dict) -> dict:
        return {"features": ops.cast(ops.shape(features["input_ids"])[0], "float32")}

    def sums(self, outputs: dict, features: dict) -> dict:
        sums = {"loss": 0.0}
        for end in ("start", "end"):
            logits = outputs[f"{end}_logits"]  # [B, S]
            positions = ops.cast(features[f"{end}_positions"], "int32")  # [B]
            log_probs = ops.log_softmax(logits, axis=-1)
            one_hot = ops.one_hot(positions, ops.shape(logits)[-1], dtype="float32")
            nll = -ops.sum(one_hot * log_probs, axis=-1)  # [B]
            sums["loss"] = sums["loss"] + ops.sum(nll) / 2.0
            correct = ops.cast(ops.argmax(logits, axis=-1) == positions, "float32")
            sums[f"{end}_accuracy"] = ops.sum(correct)
        return sums

    def loss(self, sums: dict, counts: dict):
        return sums["loss"] / ops.maximum(counts["features"], 1.0)

    def metrics(self, sums: dict, counts: dict) -> dict:
        features = ops.maximum(counts["features"], 1.0)
        return {name: sums[name] / features for name in self.sum_names}
