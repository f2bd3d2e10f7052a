"""Writing the pre-training TFRecords: the original's features, names, dtypes and padding.

TensorFlow is not imported here (see bert_tf.io.tfrecord); `dataset` reads the records back.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Sequence

import numpy as np

from bert_tf.io.fileio import atomic_open
from bert_tf.io.tfrecord import RecordSchema, TFRecordWriter
from bert_tf.pretraining.instances import TrainingInstance


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


@functools.cache  # built once, not for each of the millions of instances written
def record_schema(max_seq_length: int, max_predictions_per_seq: int) -> RecordSchema:
    """The original's pre-training record: its seven features, in the order it writes them."""
    seq, predictions = (max_seq_length,), (max_predictions_per_seq,)
    return RecordSchema(
        {
            "input_ids": (seq, "int64"),
            "input_mask": (seq, "int64"),
            "segment_ids": (seq, "int64"),
            "masked_lm_positions": (predictions, "int64"),
            "masked_lm_ids": (predictions, "int64"),
            "masked_lm_weights": (predictions, "float32"),
            "next_sentence_labels": ((1,), "int64"),
        }
    )


def serialize_instance(
    instance: TrainingInstance, max_seq_length: int, max_predictions_per_seq: int
) -> bytes:
    """The serialized tf.train.Example of one instance."""
    features = instance_features(instance, max_seq_length, max_predictions_per_seq)
    values = {name: value.tolist() for name, value in features.items()}
    values["masked_lm_weights"] = features["masked_lm_weights"]  # packed as float32 as it is
    return record_schema(max_seq_length, max_predictions_per_seq).encode(values)


def write_instances(
    instances: Iterable[TrainingInstance],
    output_files: Sequence[str],
    max_seq_length: int,
    max_predictions_per_seq: int,
) -> int:
    """Writes instances round-robin to `output_files`, as the original; returns the count.

    Each file is written under a temporary name and renamed when all are complete.
    """
    count = 0
    # Leaving the stack renames every file, after the last record; an error removes them all.
    with contextlib.ExitStack() as stack:
        files = [stack.enter_context(atomic_open(path, "wb")) for path in output_files]
        writers = [TFRecordWriter(f) for f in files]
        for count, instance in enumerate(instances, start=1):
            writers[(count - 1) % len(writers)].write(
                serialize_instance(instance, max_seq_length, max_predictions_per_seq)
            )
        for writer in writers:
            writer.flush()
    return count
