"""Reading the pre-training TFRecords back: the feature spec of the original's reader."""

from __future__ import annotations

import tensorflow as tf


def feature_spec(max_seq_length: int, max_predictions_per_seq: int) -> dict:
    """`tf.io.parse_single_example` spec of a record (what run_pretraining reads)."""
    seq = tf.io.FixedLenFeature([max_seq_length], tf.int64)
    predictions = tf.io.FixedLenFeature([max_predictions_per_seq], tf.int64)
    return {
        "input_ids": seq,
        "input_mask": seq,
        "segment_ids": seq,
        "masked_lm_positions": predictions,
        "masked_lm_ids": predictions,
        "masked_lm_weights": tf.io.FixedLenFeature([max_predictions_per_seq], tf.float32),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }


def read_records(path: str, max_seq_length: int, max_predictions_per_seq: int) -> list[dict]:
    """Parses every record of a file into numpy feature dicts (for tests and inspection)."""
    spec = feature_spec(max_seq_length, max_predictions_per_seq)
    return [
        {name: value.numpy() for name, value in tf.io.parse_single_example(record, spec).items()}
        for record in tf.data.TFRecordDataset(path)
    ]
