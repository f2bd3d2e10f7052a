"""The pre-training input pipeline: the original's `input_fn_builder` in tf.data.

Training: the file list repeats and is shuffled, files are read in parallel (interleave), a
small shuffle buffer mixes records, and batches keep a fixed shape (drop_remainder), as the
original. Evaluation reads the files once, in order. Features are parsed with the original's
spec and cast from int64 to int32 (what the model takes; TPUs want int32 too).
"""

from __future__ import annotations

import contextlib

import tensorflow as tf

from bert_tf.errors import InputError, first_line
from bert_tf.finetuning.input_pipeline import RECORD_SHUFFLE_BUFFER, decode_record
from bert_tf.io.tfrecord import count_complete_records
from bert_tf.pretraining.dataset import feature_spec

# As the original: a few files read at once and a 100-record shuffle buffer; files are
# themselves shuffled, which is where most of the mixing comes from.
NUM_CPU_THREADS = 4


# How many records of each file `check_records` reads for their token ids: records made with
# another vocab hold ids beyond this one's in nearly every record.
RECORDS_CHECKED_PER_FILE = 100


def check_records(
    input_files: list[str],
    max_seq_length: int,
    max_predictions_per_seq: int,
    vocab_size: int | None = None,
    bert_config_file: str | None = None,
    flag: str = "--input_file",
) -> None:
    """Checks the records before the first step: each file whole (its length headers walked
    to the end), the features and lengths of its first record against the flags, and the
    token ids of its first records against the model's `vocab_size`.

    The original would fail deep inside the graph ("Can't parse serialized Example", a
    DataLossError, `indices[28,1] = 3793 is not in [0, 3667)`) or, on a GPU, silently embed
    out-of-range ids as zeros; this says which file, which feature and which flag disagree.
    """
    for path in input_files:
        if "://" not in path:  # a remote file would be read whole
            try:
                count_complete_records(path)
            except InputError as e:
                raise InputError(f"{flag}: {e}") from None
        records = _first_records(path, flag)
        _check_features(tf.train.Example.FromString(records[0]), path, flag, {
            "max_seq_length": ("input_ids", max_seq_length),
            "max_predictions_per_seq": ("masked_lm_positions", max_predictions_per_seq),
        })  # fmt: skip
        if vocab_size is not None:
            _check_token_ids(records, path, flag, vocab_size, bert_config_file)


@contextlib.contextmanager
def naming_damaged_records(flag: str, files: list[str]):
    """Turns a DataLossError of the records being read (bytes changed after `check_records`
    walked them: TensorFlow's checksums disagree) into one line naming the files."""
    try:
        yield
    except tf.errors.DataLossError as e:
        where = files[0] if len(files) == 1 else f"one of {len(files)} files ({files[0]}, ...)"
        raise InputError(
            f"{flag}: a record in {where} is damaged ({first_line(e)}); copy or make the "
            "records again (the checkpoints saved so far are kept)"
        ) from None


def _first_records(path: str, flag: str) -> list[bytes]:
    try:
        dataset = tf.data.TFRecordDataset(path).take(RECORDS_CHECKED_PER_FILE)
        records = [record.numpy() for record in dataset]
    except tf.errors.DataLossError as e:
        raise InputError(f"{flag}: {path} is not a TFRecord file ({e.message})") from None
    if not records:
        raise InputError(f"{flag}: {path} holds no record")
    return records


def _check_features(example, path: str, flag: str, lengths: dict) -> None:
    features = example.features.feature
    missing = sorted(set(feature_spec(1, 1)) - set(features))
    if missing:
        raise InputError(
            f"{flag}: {path}: records lack the features {', '.join(missing)}; "
            f"expected the output of create_pretraining_data.py"
        )
    for length_flag, (name, expected) in lengths.items():
        kind = features[name].WhichOneof("kind")
        found = len(getattr(features[name], kind).value)
        if found != expected:
            raise InputError(
                f"{flag}: {path}: records have {name} of length {found} but "
                f"--{length_flag}={expected}; it must equal the value the data was "
                f"generated with"
            )


def _check_token_ids(records, path, flag, vocab_size, bert_config_file) -> None:
    largest = max(
        max(feature.int64_list.value, default=0)
        for record in records
        for name, feature in tf.train.Example.FromString(record).features.feature.items()
        if name in ("input_ids", "masked_lm_ids")
    )
    if largest >= vocab_size:
        raise InputError(
            f"{flag}: {path} holds token id {largest} but the model's vocab_size is "
            f"{vocab_size} ({bert_config_file}): the records were made with another vocab; "
            "make them again with the model's vocab.txt as --vocab_file"
        )


def pretraining_dataset(
    input_files: list[str],
    batch_size: int,
    max_seq_length: int,
    max_predictions_per_seq: int,
    is_training: bool,
    seed: int | None = None,
    skip_records: int = 0,
) -> tf.data.Dataset:
    """Batches of the seven record features: int32 [batch, S] / [batch, P] /
    [batch, 1], and float32 masked_lm_weights.

    With `seed`, the order is deterministic (parallel reading keeps its order); without,
    parallel reads may interleave nondeterministically, which is faster. Training skips the
    first `skip_records` records of that order: a resumed run goes on where it stopped.
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
        dataset = dataset.shuffle(RECORD_SHUFFLE_BUFFER, seed=seed).skip(skip_records)
    else:
        dataset = tf.data.TFRecordDataset(input_files)
    spec = feature_spec(max_seq_length, max_predictions_per_seq)
    dataset = dataset.map(
        lambda record: decode_record(record, spec), num_parallel_calls=tf.data.AUTOTUNE
    )
    return dataset.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
