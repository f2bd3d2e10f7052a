"""The pre-training TFRecords: the original's features, names, dtypes and padding."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence

import numpy as np
import tensorflow as tf

from bert_tf.pretraining.instances import TrainingInstance


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


def instance_features(
    instance: TrainingInstance, max_seq_length: int, max_predictions_per_seq: int
) -> dict[str, np.ndarray]:
    """The record's features as arrays, zero-padded as the original writes them."""
    num_tokens = len(instance.input_ids)
    num_predictions = len(instance.masked_lm_positions)
    if num_tokens > max_seq_length or num_predictions > max_predictions_per_seq:
        raise ValueError(f"instance of {num_tokens} tokens, {num_predictions} predictions")
    input_ids = np.zeros(max_seq_length, np.int64)
    input_ids[:num_tokens] = instance.input_ids
    input_mask = np.zeros(max_seq_length, np.int64)
    input_mask[:num_tokens] = 1
    segment_ids = np.zeros(max_seq_length, np.int64)
    segment_ids[instance.len_a : num_tokens] = 1
    positions = np.zeros(max_predictions_per_seq, np.int64)
    positions[:num_predictions] = instance.masked_lm_positions
    ids = np.zeros(max_predictions_per_seq, np.int64)
    ids[:num_predictions] = instance.masked_lm_ids
    weights = np.zeros(max_predictions_per_seq, np.float32)
    weights[:num_predictions] = 1.0
    return {
        "input_ids": input_ids,
        "input_mask": input_mask,
        "segment_ids": segment_ids,
        "masked_lm_positions": positions,
        "masked_lm_ids": ids,
        "masked_lm_weights": weights,
        # As the original: 1 = the second segment is a random sentence, 0 = it is the next one.
        "next_sentence_labels": np.array([int(instance.is_random_next)], np.int64),
    }


def serialize_instance(
    instance: TrainingInstance, max_seq_length: int, max_predictions_per_seq: int
) -> bytes:
    features = {}
    for name, values in instance_features(
        instance, max_seq_length, max_predictions_per_seq
    ).items():
        if values.dtype == np.float32:
            features[name] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        else:
            features[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    example = tf.train.Example(features=tf.train.Features(feature=features))
    return example.SerializeToString()


def write_instances(
    instances: Iterable[TrainingInstance],
    output_files: Sequence[str],
    max_seq_length: int,
    max_predictions_per_seq: int,
) -> int:
    """Writes instances round-robin to `output_files`, as the original; returns the count.

    Each file is written under a temporary name and renamed when all are complete.
    """
    tmp_files = [f"{path}.tmp-{os.getpid()}" for path in output_files]
    count = 0
    try:
        with contextlib.ExitStack() as stack:
            writers = [stack.enter_context(tf.io.TFRecordWriter(tmp)) for tmp in tmp_files]
            for count, instance in enumerate(instances, start=1):
                writers[(count - 1) % len(writers)].write(
                    serialize_instance(instance, max_seq_length, max_predictions_per_seq)
                )
        for tmp, path in zip(tmp_files, output_files, strict=True):
            os.replace(tmp, path)
    except BaseException:
        for tmp in tmp_files:
            with contextlib.suppress(FileNotFoundError):
                os.remove(tmp)
        raise
    return count


def read_records(path: str, max_seq_length: int, max_predictions_per_seq: int) -> list[dict]:
    """Parses every record of a file into numpy feature dicts (for tests and inspection)."""
    spec = feature_spec(max_seq_length, max_predictions_per_seq)
    return [
        {name: value.numpy() for name, value in tf.io.parse_single_example(record, spec).items()}
        for record in tf.data.TFRecordDataset(path)
    ]
