"""Reading the pre-training TFRecords back: the feature spec of the original's reader."""

from __future__ import annotations

import tensorflow as tf

from bert_tf.pretraining.records import record_schema


def feature_spec(max_seq_length: int, max_predictions_per_seq: int) -> dict:
    """`tf.io.parse_single_example` spec of a record (what run_pretraining reads)."""
    return record_schema(max_seq_length, max_predictions_per_seq).spec()


def read_records(path: str, max_seq_length: int, max_predictions_per_seq: int) -> list[dict]:
    """Parses every record of a file into numpy feature dicts (for tests and inspection)."""
    spec = feature_spec(max_seq_length, max_predictions_per_seq)
    return [
        {name: value.numpy() for name, value in tf.io.parse_single_example(record, spec).items()}
        for record in tf.data.TFRecordDataset(path)
    ]


def mean_tokens_per_record(files: list[str], count: int = 10_000) -> float:
    """The mean number of real tokens (input_mask's ones) in the first `count` records of
    `files`: with the steps and batch size, the tokens a pre-training run has seen (the
    generator shuffles its records, so the first ones are a fair sample)."""
    spec = {"input_mask": tf.io.VarLenFeature(tf.int64)}
    tokens = records = 0
    for batch in tf.data.TFRecordDataset(files).take(count).batch(1000):
        tokens += int(tf.reduce_sum(tf.io.parse_example(batch, spec)["input_mask"].values))
        records += int(batch.shape[0])
    return tokens / records
