"""Our TensorFlow-free TFRecord writer produces what TensorFlow writes and reads."""

from __future__ import annotations

import random

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.io.tfrecord import (
    TFRecordWriter,
    count_complete_records,
    encode_example,
    masked_crc32c,
)
from bert_tf.pretraining.input_pipeline import naming_damaged_records


def test_crc32c_check_value_and_masking():
    # CRC-32C("123456789") = 0xE3069283 (the standard check value), then TFRecord's mask.
    crc = 0xE3069283
    masked = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    assert masked_crc32c([b"123456789"]).tolist() == [masked]


def test_files_are_byte_identical_to_tensorflows_writer(tmp_path):
    rng = random.Random(0)
    records = [rng.randbytes(rng.randint(0, 300)) for _ in range(257)]
    ours, theirs = tmp_path / "ours.tfrecord", tmp_path / "theirs.tfrecord"
    with open(ours, "wb") as f:
        writer = TFRecordWriter(f, batch_size=100)
        for record in records:
            writer.write(record)
        writer.flush()
    with tf.io.TFRecordWriter(str(theirs)) as writer:
        for record in records:
            writer.write(record)
    assert ours.read_bytes() == theirs.read_bytes()


def test_examples_parse_with_tensorflow():
    serialized = encode_example(
        {"input_ids": [101, 0, 300_000, 2**40], "next_sentence_labels": [1]},
        {"masked_lm_weights": [1.0, 0.0, 0.5]},
    )
    spec = {
        "input_ids": tf.io.FixedLenFeature([4], tf.int64),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
        "masked_lm_weights": tf.io.FixedLenFeature([3], tf.float32),
    }
    parsed = tf.io.parse_single_example(serialized, spec)
    assert parsed["input_ids"].numpy().tolist() == [101, 0, 300_000, 2**40]
    assert parsed["next_sentence_labels"].numpy().tolist() == [1]
    np.testing.assert_array_equal(parsed["masked_lm_weights"], [1.0, 0.0, 0.5])


def _records_file(tmp_path, count=5):
    path = tmp_path / "data.tfrecord"
    with open(path, "wb") as f:
        writer = TFRecordWriter(f)
        for i in range(count):
            writer.write(encode_example({"input_ids": [i] * (i + 3)}, {}))
        writer.flush()
    return path


def test_a_whole_file_counts_its_records(tmp_path):
    assert count_complete_records(str(_records_file(tmp_path))) == 5


@pytest.mark.parametrize("cut", [1, 5, 20])  # in the last data, its CRC, the last header
def test_a_truncated_file_is_named_with_the_record_cut_short(tmp_path, cut):
    path = _records_file(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[:-cut])
    with pytest.raises(InputError, match=f"{path}: truncated TFRecord file: record 5 starts"):
        count_complete_records(str(path))


def test_a_file_that_is_not_records_is_named_as_such(tmp_path):
    path = tmp_path / "text.tfrecord"
    path.write_text("not a record file\n" * 10)
    with pytest.raises(InputError, match=f"{path} is not a TFRecord file \\(its first record"):
        count_complete_records(str(path))


def test_a_changed_byte_found_while_training_is_one_line_naming_the_files(tmp_path):
    path = _records_file(tmp_path)
    data = bytearray(path.read_bytes())
    data[-6] ^= 0xFF  # inside the last record's data: the walk passes, the checksum does not
    path.write_bytes(bytes(data))
    assert count_complete_records(str(path)) == 5
    with pytest.raises(InputError, match=f"--input_file: a record in {path} is damaged \\("):
        with naming_damaged_records("--input_file", [str(path)]):
            for _ in tf.data.TFRecordDataset(str(path)):
                pass
