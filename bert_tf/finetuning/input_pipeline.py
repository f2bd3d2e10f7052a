"""The fine-tuning input pipeline of every task: the original's `file_based_input_fn_builder`
(run_classifier.py) and `input_fn_builder` (run_squad.py) in tf.data.

Training repeats the records and shuffles them in a 100-record buffer (as the original);
evaluation and prediction read them once, in order, each record numbered (`example_index`)
so that outputs gathered from several replicas or workers can be put back in order.
"""

from __future__ import annotations

import tensorflow as tf

RECORD_SHUFFLE_BUFFER = 100


def decode_record(record, feature_spec: dict) -> dict:
    """One record's features (`RecordSchema.spec()`), int64 cast to int32 as the original
    does (what the model takes; TPUs want int32 too): every pipeline's decoder."""
    example = tf.io.parse_single_example(record, feature_spec)
    return {
        name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
        for name, value in example.items()
    }


def record_dataset(
    input_file: str,
    feature_spec: dict,
    batch_size: int,
    is_training: bool,
    seed: int | None = None,
) -> tf.data.Dataset:
    """Batches of the parsed features (`decode_record`), plus `example_index` [B] int32 when
    not training. `drop_remainder`: every batch has the same shape (eval/predict files are
    padded to whole batches)."""

    def decode(record):
        return decode_record(record, feature_spec)

    dataset = tf.data.TFRecordDataset(input_file)
    if is_training:
        dataset = dataset.repeat().shuffle(RECORD_SHUFFLE_BUFFER, seed=seed)
        dataset = dataset.map(decode, num_parallel_calls=tf.data.AUTOTUNE)
    else:
        dataset = dataset.map(decode).enumerate()
        dataset = dataset.map(lambda i, f: {**f, "example_index": tf.cast(i, tf.int32)})
    return dataset.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
