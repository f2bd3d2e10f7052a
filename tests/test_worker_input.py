"""The workers of a multi-worker run read disjoint records. tf.data shards the input by file
where there are as many files as workers; with fewer (fine-tuning's one train.tf_record) every
worker keeps every N-th batch of one order, which the shared input seed makes the same order on
every worker (TensorFlow's distributed-input guide)."""

from __future__ import annotations

import tensorflow as tf
from tensorflow.python.data.experimental.ops.distribute import _AutoShardDataset

from bert_tf.finetuning.input_pipeline import record_dataset
from bert_tf.training import distribute

SPEC = {"input_ids": tf.io.FixedLenFeature([1], tf.int64)}


def _records(path: str, count: int) -> None:
    with tf.io.TFRecordWriter(path) as writer:
        for i in range(count):
            feature = tf.train.Feature(int64_list=tf.train.Int64List(value=[i]))
            example = tf.train.Example(features=tf.train.Features(feature={"input_ids": feature}))
            writer.write(example.SerializeToString())


def _batches(path: str, seed, workers: int = 1, index: int = 0, count: int = 10) -> list:
    """The first `count` training batches worker `index` of `workers` reads, sharded as
    tf.distribute shards a dataset of one file (DATA)."""
    dataset = record_dataset(path, SPEC, 2, True, seed)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    dataset = dataset.with_options(options)
    if workers > 1:
        dataset = _AutoShardDataset(dataset, workers, index, workers)
    return [batch["input_ids"].numpy().ravel().tolist() for batch in dataset.take(count)]


def test_two_workers_with_no_seed_given_split_one_order_between_them(tmp_path, monkeypatch):
    path = str(tmp_path / "train.tf_record")
    _records(path, 40)
    monkeypatch.setattr(distribute, "num_workers", lambda strategy: 2)
    seed = distribute.input_seed(None, strategy=None)
    assert seed is not None
    first, second = (_batches(path, seed, 2, index) for index in (0, 1))
    # Each batch of the one order goes to one worker: the even ones to the first, the odd ones
    # to the second (a record repeats only as one reader would repeat it, epoch after epoch).
    one_reader = _batches(path, seed, count=20)
    assert (one_reader[0::2], one_reader[1::2]) == (first, second)


def test_one_worker_keeps_the_unseeded_order():
    assert distribute.input_seed(None, tf.distribute.get_strategy()) is None
    assert distribute.input_seed(3, tf.distribute.get_strategy()) == 3
