"""TF checkpoint files: Google's original TF1 checkpoints (`bert_model.ckpt`, by variable name)
read and written, and bert_tf's training checkpoints (`ckpt-<step>`, object-based) read.

The correspondence of names is the model's own (`model.original_variable_names()`). Our layers
keep the original's layouts, so no value is transposed or reshaped on the way in or out, and a
round trip is bit-exact (loading: `bert_tf.loading.load_checkpoint`).

    save_original_checkpoint(encoder, "out/bert_model.ckpt")
"""

from __future__ import annotations

import os
import re

import keras
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from bert_tf import filesystem
from bert_tf.checkpointing import latest_checkpoint
from bert_tf.errors import InputError, first_line
from bert_tf.fileio import atomic_write_text, remove_stale_temporaries, temporary_prefix

# The entry that makes a checkpoint object-based: Keras's object graph, which bert_tf's
# training checkpoints record (the original's are name-based).
OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"
_FILE_OF_PREFIX = re.compile(r"\.(index|meta|data-\d{5}-of-\d{5})$")


def checkpoint_reader(prefix: str):
    """The reader of the checkpoint `prefix` (as resolved by `resolve_checkpoint_path`).
    Not `tf.train.load_checkpoint`, which takes a prefix that its file system calls a folder
    (ram:// calls every prefix of a file's name one) for a folder of checkpoints."""
    return tf.compat.v1.train.NewCheckpointReader(prefix)


def checkpoint_prefix(path: str | os.PathLike) -> str | None:
    """The checkpoint `path` names itself: a prefix (`.../bert_model.ckpt`, `.../ckpt-2`) or one
    of its files (`bert_model.ckpt.index`, a common slip, google-research/bert#555); None for
    anything else (a folder)."""
    prefix = _FILE_OF_PREFIX.sub("", os.fspath(path))
    return prefix if filesystem.isfile(prefix + ".index") else None


def resolve_checkpoint_path(path: str | os.PathLike) -> str:
    """The checkpoint prefix of `path`, as users of the original pass it: a prefix, one of its
    files, or a folder (the latest checkpoint its state file names, else bert_model.ckpt).

    Raises:
        InputError: no checkpoint there, naming the path.
    """
    prefix = checkpoint_prefix(path)
    if prefix is None and filesystem.isdir(path):
        prefix = latest_checkpoint(os.fspath(path)) or checkpoint_prefix(
            os.path.join(path, "bert_model.ckpt")
        )
    if prefix is None:
        raise InputError(
            f"{os.fspath(path)}: no checkpoint found (expected the prefix of a TF checkpoint "
            "such as .../bert_model.ckpt, with bert_model.ckpt.index beside it)"
        )
    return prefix


def is_object_based(prefix: str) -> bool:
    """Whether the checkpoint `prefix` is a bert_tf training checkpoint (`ckpt-<step>`)."""
    return OBJECT_GRAPH in checkpoint_reader(prefix).get_variable_to_shape_map()


def object_graph_keys(prefix: str) -> dict[str, str]:
    """Keras path (`embeddings/word_embeddings`) -> key in the training checkpoint `prefix`,
    for every variable its object graph records."""
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(checkpoint_reader(prefix).get_tensor(OBJECT_GRAPH))
    return {
        attribute.full_name: attribute.checkpoint_key
        for node in graph.nodes
        for attribute in node.attributes
    }


def save_original_checkpoint(model: keras.Model, checkpoint_prefix: str | os.PathLike) -> str:
    """Writes `model`'s weights as a TF1 name-based checkpoint under the original names: what
    the original code and `tf.train.list_variables` read (`<prefix>.index`,
    `<prefix>.data-00000-of-00001`, and a `checkpoint` state file naming it). Returns the
    prefix."""
    table = model.original_variable_names()
    return write_original_checkpoint(
        {name: keras.ops.convert_to_numpy(variable) for name, variable in table.items()},
        checkpoint_prefix,
    )


def write_original_checkpoint(
    tensors: dict[str, np.ndarray], checkpoint_prefix: str | os.PathLike
) -> str:
    """Writes `tensors` (original name -> value) as `save_original_checkpoint` does, under a
    temporary prefix renamed into place (the index last): a crash leaves no partial checkpoint
    under the real name, on a local disk as in a bucket."""
    prefix = os.fspath(checkpoint_prefix)
    directory = os.path.dirname(prefix) or "."
    filesystem.makedirs(directory)
    names = sorted(tensors)
    if not filesystem.is_url(prefix):
        remove_stale_temporaries(prefix)
    tmp_prefix = temporary_prefix(prefix) + os.urandom(4).hex()
    suffixes = (".data-00000-of-00001", ".index")  # the index makes a checkpoint visible
    try:
        tf.raw_ops.SaveV2(
            prefix=tmp_prefix,
            tensor_names=names,
            shape_and_slices=[""] * len(names),
            tensors=[tf.constant(np.asarray(tensors[name])) for name in names],
        )
        for suffix in suffixes:
            filesystem.rename(tmp_prefix + suffix, prefix + suffix)
    except (tf.errors.OpError, OSError) as e:
        for suffix in suffixes:
            if filesystem.exists(tmp_prefix + suffix):
                filesystem.remove(tmp_prefix + suffix)
        raise InputError(
            f"{prefix}: cannot write the checkpoint ({first_line(e)}); nothing was left under "
            "that name"
        ) from None
    base = os.path.basename(prefix)
    atomic_write_text(
        os.path.join(directory, "checkpoint"),
        f'model_checkpoint_path: "{base}"\nall_model_checkpoint_paths: "{base}"\n',
    )
    return prefix
