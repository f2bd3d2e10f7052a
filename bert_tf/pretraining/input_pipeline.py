"""The pre-training input pipeline: the original's `input_fn_builder` in tf.data.

Training: the file list repeats and is shuffled, files are read in parallel (interleave), a
small shuffle buffer mixes records, and batches keep a fixed shape (drop_remainder), as the
original. Evaluation reads the files once, in order. Features are parsed with the original's
spec and cast from int64 to int32 (what the model takes; TPUs want int32 too).
"""

from __future__ import annotations

import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.input_pipeline import RECORD_SHUFFLE_BUFFER
from bert_tf.pretraining.dataset import feature_spec

# As the original: a few files read at once and a 100-record shuffle buffer; files are
# themselves shuffled, which is where most of the mixing comes from.
NUM_CPU_THREADS = 4


def check_records(
    input_files: list[str], max_seq_length: int, max_predictions_per_seq: int
) -> None:
    """Reads the first record of each file and checks its features against the flags.

    The original would fail deep inside the graph ("Can't parse serialized Example"); this
    says which file, which feature and which flag disagree.
    """
    expected = set(feature_spec(1, 1))
    lengths = {"input_ids": max_seq_length, "masked_lm_positions": max_predictions_per_seq}
    flags = {"input_ids": "max_seq_length", "masked_lm_positions": "max_predictions_per_seq"}
    for path in input_files:
        try:
            record = next(iter(tf.data.TFRecordDataset(path).take(1)), None)
        except tf.errors.DataLossError as e:
            raise InputError(f"--input_file: {path} is not a TFRecord file ({e.message})") from None
        if record is None:
            raise InputError(f"--input_file: {path} holds no record")
        example = tf.train.Example.FromString(record.numpy())
        features = example.features.feature
        missing = sorted(expected - set(features))
        if missing:
            raise InputError(
                f"--input_file: {path}: records lack the features {', '.join(missing)}; "
                f"expected the output of create_pretraining_data.py"
            )
        for name, flag in flags.items():
            kind = features[name].WhichOneof("kind")
            found = len(getattr(features[name], kind).value)
            if found != lengths[name]:
                raise InputError(
                    f"--input_file: {path}: records have {name} of length {found} but "
                    f"--{flag}={lengths[name]}; it must equal the value the data was "
                    f"generated with"
                )


def _decode(record, max_seq_length: int, max_predictions_per_seq: int) -> dict:
    example = tf.io.parse_single_example(
        record, feature_spec(max_seq_length, max_predictions_per_seq)
    )
    return {
        name: tf.cast(value, tf.int32) if value.dtype == tf.int64 else value
        for name, value in example.items()
    }


def pretraining_dataset(
    input_files: list[str],
    batch_size: int,
    max_seq_length: int,
    max_predictions_per_seq: int,
    is_training: bool,
    seed: int | None = None,
) -> tf.data.Dataset:
    """Batches of the seven record features: int32 [batch, S] / [batch, P] /
    [batch, 1], and float32 masked_lm_weights.

    With `seed`, the order is deterministic (parallel reading keeps its order); without,
    parallel reads may interleave nondeterministically, which is faster.
    """
    if is_training:
        files = tf.data.Dataset.from_tensor_slices(tf.constant(input_files))
        files = files.repeat().shuffle(len(input_files), seed=seed)
        dataset = files.interleave(
            tf.data.TFRecordDataset,
            cycle_length=min(NUM_CPU_THREADS, len(input_files)),
            num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=seed is not None,
        )
        dataset = dataset.shuffle(RECORD_SHUFFLE_BUFFER, seed=seed)
    else:
        dataset = tf.data.TFRecordDataset(input_files)
    dataset = dataset.map(
        lambda record: _decode(record, max_seq_length, max_predictions_per_seq),
        num_parallel_calls=tf.data.AUTOTUNE,
    )
    return dataset.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
