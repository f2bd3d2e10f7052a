"""Reading a tensorflow-datasets set prepared beforehand (nothing is downloaded at run time):
one loader for GLUE, SQuAD, CoNLL-2003 and the pre-training text sets."""

from __future__ import annotations

from collections.abc import Iterator


def load_prepared(name: str, split: str, data_dir: str | None, flag: str = "--use_tfds"):
    """(the split's examples as numpy dicts, the set's `DatasetInfo`) of `name`.

    Raises:
        InputError: the set (or split) is not prepared in data_dir, naming `flag`.
    """
    import tensorflow_datasets as tfds  # only when a task reads tensorflow-datasets

    from bert_tf.errors import InputError

    try:
        builder = tfds.builder(name, data_dir=data_dir)
        dataset = builder.as_dataset(split=split, shuffle_files=False)
    except (AssertionError, FileNotFoundError, tfds.core.registered.DatasetNotFoundError) as e:
        raise InputError(
            f"{flag}: {name} (split {split}) is not prepared in --tfds_data_dir="
            f"{data_dir or tfds.core.constants.DATA_DIR}; build it where the network is "
            f"reachable (`tfds build {name}`) ({str(e).splitlines()[0]})"
        ) from None
    return _examples(tfds.as_numpy(dataset)), builder.info


def _examples(rows) -> Iterator[dict]:
    yield from rows
