"""TF checkpoint files: Google's original TF1 checkpoints (`bert_model.ckpt`, name-based) read
and written, and bert_tf's training checkpoints (`ckpt-<step>` in an output_dir, object-based,
kept copies in `kept/`; saved by `bert_tf.training.checkpoints`) listed and read. Every write
is staged: a crash leaves no partial checkpoint under a real name, on a local disk as in a
bucket.

    save_original_checkpoint(encoder, "out/bert_model.ckpt")   # loading: model_io.loading
"""

from __future__ import annotations

import functools
import logging
import os
import re

import keras
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from bert_tf.errors import InputError, first_line
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text, remove_stale_temporaries, temporary_prefix

logger = logging.getLogger(__name__)

KEPT_CHECKPOINTS_DIR = "kept"  # where `keep_checkpoint_every_n_steps` keeps its copies
# The entry that makes a checkpoint object-based: Keras's object graph (the original's have none).
OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"
# What reading a damaged checkpoint raises: IndexError ("Read less bytes than requested") for
# a truncated .data file, DataLossError (checksum) or another OpError for changed bytes.
UNREADABLE_CHECKPOINT = (tf.errors.OpError, IndexError)
_FILE_OF_PREFIX = re.compile(r"\.(index|meta|data-\d{5}-of-\d{5})$")


def training_checkpoints(directory: str) -> list[str]:
    """The whole `ckpt-<step>` prefixes in `directory`, oldest first: the one listing of a run's
    checkpoints, its `checkpoint` state file's (without one: its `ckpt-<step>.index` files).
    One the state file lists without its .index is left out, and said once (a warning)."""
    state = tf.train.get_checkpoint_state(directory) if filesystem.isdir(directory) else None
    if state is not None:
        paths = list(state.all_model_checkpoint_paths) or [state.model_checkpoint_path]
    else:
        pattern = os.path.join(filesystem.escape(directory), "ckpt-*.index")
        paths = [path[: -len(".index")] for path in filesystem.glob(pattern)]
    steps, lost = {}, []
    for path in paths:
        found = re.fullmatch(r"ckpt-(\d+)", os.path.basename(path))
        path = os.path.join(directory, os.path.basename(path))
        if found and filesystem.isfile(path + ".index"):
            steps[int(found.group(1))] = path
        elif found:
            lost.append(path)
    listed = [steps[step] for step in sorted(steps)]
    if lost:
        _say_lost(tuple(lost), listed[-1] if listed else None)
    return listed


@functools.cache  # once a process: the listing is asked for again before each use
def _say_lost(lost: tuple[str, ...], latest: str | None) -> None:
    instead = f"the latest whole one is {os.path.basename(latest)}" if latest else "none is whole"
    logger.warning(
        "%s: listed in its checkpoint state file, but without its .index (deleted or not "
        "copied); %s", listing(list(lost)), instead,
    )  # fmt: skip


def listing(names: list[str], most: int = 5) -> str:
    """`names` joined, the first `most` of them."""
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def variable_names(model: keras.Model) -> dict[str, keras.Variable]:
    """Every variable of `model` by name: the original's (`model.original_variable_names()`),
    else, for one the original has no name for (a BiLSTM head, a scalar mix), its Keras path."""
    table = dict(model.original_variable_names())
    named = {id(variable) for variable in table.values()}
    table.update({v.path: v for v in model.weights if id(v) not in named})
    return table


def latest_checkpoint(directory: str) -> str | None:
    """The last of `training_checkpoints(directory)`, else the one its state file names (an
    Estimator's `model.ckpt-N`, a released `bert_model.ckpt`); None without either."""
    found = training_checkpoints(directory)
    if found:
        return found[-1]
    state = tf.train.get_checkpoint_state(directory) if filesystem.isdir(directory) else None
    prefix = state.model_checkpoint_path if state else ""
    return prefix if prefix and filesystem.isfile(prefix + ".index") else None


def checkpoint_prefix(path: str | os.PathLike) -> str | None:
    """The checkpoint `path` names: a prefix (`.../bert_model.ckpt`, `.../ckpt-2`) or one of its
    files (`bert_model.ckpt.index`, google-research/bert#555); None for anything else."""
    prefix = _FILE_OF_PREFIX.sub("", os.fspath(path))
    return prefix if filesystem.isfile(prefix + ".index") else None


def resolve_checkpoint_path(path: str | os.PathLike) -> str:
    """The checkpoint prefix of `path`: a prefix, one of its files, or a folder (its
    `latest_checkpoint`, else its bert_model.ckpt). Raises `InputError` without one."""
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


def checkpoint_reader(prefix: str):
    """The reader of the checkpoint `prefix`. Not `tf.train.load_checkpoint`, which reads a
    prefix that its file system calls a folder (ram:// calls any) as a folder of checkpoints."""
    return tf.compat.v1.train.NewCheckpointReader(prefix)


def object_graph_keys(reader) -> dict[str, str]:
    """Keras path (`embeddings/word_embeddings`) -> key, for each variable of a training
    checkpoint's object graph; {} for a name-based (original) checkpoint."""
    if not reader.has_tensor(OBJECT_GRAPH):
        return {}
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor(OBJECT_GRAPH))
    return {a.full_name: a.checkpoint_key for node in graph.nodes for a in node.attributes}


def save_original_checkpoint(model: keras.Model, checkpoint_prefix: str | os.PathLike) -> str:
    """Writes every weight of `model` under the original names (`variable_names`: a variable
    the original lacks under its Keras path) with a `checkpoint` state file, as the original
    reads them. Returns the prefix."""
    table = variable_names(model)
    return write_original_checkpoint(
        {name: keras.ops.convert_to_numpy(variable) for name, variable in table.items()},
        checkpoint_prefix,
    )


def write_original_checkpoint(
    tensors: dict[str, np.ndarray], checkpoint_prefix: str | os.PathLike
) -> str:
    """Writes `tensors` (original name -> value) as `save_original_checkpoint` does."""
    prefix, names = os.fspath(checkpoint_prefix), sorted(tensors)
    directory = os.path.dirname(prefix) or "."
    filesystem.makedirs(directory)
    write_staged(
        prefix,
        (".data-00000-of-00001", ".index"),
        lambda tmp: tf.raw_ops.SaveV2(
            prefix=tmp,
            tensor_names=names,
            shape_and_slices=[""] * len(names),
            tensors=[tf.constant(np.asarray(tensors[name])) for name in names],
        ),
    )
    base = os.path.basename(prefix)
    atomic_write_text(
        os.path.join(directory, "checkpoint"),
        f'model_checkpoint_path: "{base}"\nall_model_checkpoint_paths: "{base}"\n',
    )
    return prefix


def write_staged(prefix: str, suffixes, write, why: str = "") -> None:
    """Calls `write(tmp)` to write the files `tmp + suffix`, then renames each to `prefix +
    suffix`, the index (which makes a checkpoint visible) last. Raises `InputError` naming
    `prefix` where the disk or bucket refuses it, leaving nothing (`why`: what is kept)."""
    remove_stale_temporaries(prefix)
    tmp = temporary_prefix(prefix) + os.urandom(4).hex()
    try:
        write(tmp)
        for suffix in sorted(suffixes, key=lambda suffix: suffix == ".index"):
            filesystem.rename(tmp + suffix, prefix + suffix)
    except (tf.errors.OpError, OSError) as e:
        kept = why or "nothing was left under that name"
        raise failed_write(
            f"{prefix}: cannot write", filesystem.escape(tmp) + "*", e, kept
        ) from None


def failed_write(what: str, leftovers: str, error: Exception, kept: str) -> InputError:
    """Removes what a failed write began (the paths the pattern `leftovers` matches) and
    returns the one line that says so."""
    for partial in filesystem.glob(leftovers):
        filesystem.discard(partial)
    return InputError(f"{what} the checkpoint ({first_line(error)}); {kept}")
