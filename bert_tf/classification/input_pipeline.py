"""The fine-tuning input pipeline: the original's `file_based_input_fn_builder` in tf.data.

Training repeats the records and shuffles them in a 100-record buffer (as the original);
evaluation and prediction read them once, in order, each record numbered (`example_index`)
so that outputs gathered from several replicas or workers can be put back in order.
"""

from __future__ import annotations

import tensorflow as tf

RECORD_SHUFFLE_BUFFER = 100


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
    training). Batches have a fixed shape: eval/predict files are padded to whole batches."""
    spec = feature_spec(max_seq_length, regression)

    def decode(record):
        example = tf.io.parse_single_example(record, spec)
        return {
            name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
            for name, value in example.items()
        }

    dataset = tf.data.TFRecordDataset(input_file)
    if is_training:
        dataset = dataset.repeat().shuffle(RECORD_SHUFFLE_BUFFER, seed=seed)
        dataset = dataset.map(decode, num_parallel_calls=tf.data.AUTOTUNE)
    else:
        dataset = dataset.map(decode).enumerate()
        dataset = dataset.map(lambda i, f: {**f, "example_index": tf.cast(i, tf.int32)})
    return dataset.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
