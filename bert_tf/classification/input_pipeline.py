"""The classifier's records: the features of run_classifier.py's TFRecord files, read by
`bert_tf.input_pipeline.record_dataset`."""

from __future__ import annotations

import tensorflow as tf

from bert_tf.input_pipeline import record_dataset


def feature_spec(max_seq_length: int, regression: bool = False) -> dict:
    return {
        "input_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "input_mask": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "label_ids": tf.io.FixedLenFeature([], tf.float32 if regression else tf.int64),
        "is_real_example": tf.io.FixedLenFeature([], tf.int64),
    }


def classifier_dataset(
    input_file: str,
    max_seq_length: int,
    batch_size: int,
    is_training: bool,
    regression: bool = False,
    seed: int | None = None,
) -> tf.data.Dataset:
    """Batches of {input_ids, input_mask, segment_ids: [B, S] int32, label_ids: [B] int32
    (float32 for regression), is_real_example: [B] int32} (+ example_index [B] when not
    training)."""
    return record_dataset(
        input_file, feature_spec(max_seq_length, regression), batch_size, is_training, seed
    )
