"""TF checkpoint files: Google's original TF1 checkpoints (`bert_model.ckpt`, name-based) read
and written, and bert_tf's training checkpoints (`ckpt-<step>` in an output_dir, object-based,
kept copies in `kept/`) listed, saved and restored. Every write is staged: a crash leaves no
partial checkpoint under a real name, on a local disk as in a bucket.

    save_original_checkpoint(encoder, "out/bert_model.ckpt")   # loading: bert_tf.loading
"""

from __future__ import annotations

import logging
import os
import re

import keras
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from bert_tf import filesystem
from bert_tf.errors import InputError, first_line
from bert_tf.fileio import atomic_write_text, remove_stale_temporaries, temporary_prefix

logger = logging.getLogger(__name__)

KEPT_CHECKPOINTS_DIR = "kept"  # where `keep_checkpoint_every_n_steps` keeps its copies
# The entry that makes a checkpoint object-based: Keras's object graph (the original's have none).
OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"
# What reading a damaged checkpoint raises: IndexError ("Read less bytes than requested") for
# a truncated .data file, DataLossError (checksum) or another OpError for changed bytes.
UNREADABLE_CHECKPOINT = (tf.errors.OpError, IndexError)
_FILE_OF_PREFIX = re.compile(r"\.(index|meta|data-\d{5}-of-\d{5})$")


def check_checkpoint_folder(folder: str, flag: str = "") -> None:
    """Raises `InputError` for a folder whose name has `*`, `?`, `[` or `]`: TensorFlow finds a
    checkpoint's files by glob pattern, so there every save works and every restore fails."""
    if re.search(r"[*?[\]]", folder):
        raise InputError(
            f"{flag + '=' if flag else ''}{folder}: TensorFlow cannot read checkpoints back from "
            "a folder whose name has *, ?, [ or ] (it finds their files by glob pattern); "
            "give a name without them"
        )


def training_checkpoints(directory: str) -> list[str]:
    """The whole `ckpt-<step>` prefixes in `directory`, oldest first: the one listing of a run's
    checkpoints, its `checkpoint` state file's (without one: its `ckpt-<step>.index` files)."""
    state = tf.train.get_checkpoint_state(directory) if filesystem.isdir(directory) else None
    if state is not None:
        paths = list(state.all_model_checkpoint_paths) or [state.model_checkpoint_path]
    else:
        pattern = os.path.join(filesystem.escape(directory), "ckpt-*.index")
        paths = [path[: -len(".index")] for path in filesystem.glob(pattern)]
    steps = {}
    for path in paths:
        found = re.fullmatch(r"ckpt-(\d+)", os.path.basename(path))
        if found and filesystem.isfile(path + ".index"):
            steps[int(found.group(1))] = os.path.join(directory, os.path.basename(path))
    return [steps[step] for step in sorted(steps)]


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
    """Writes `model`'s weights under the original names (`model.original_variable_names()`)
    with a `checkpoint` state file, as the original reads them. Returns the prefix."""
    table = model.original_variable_names()
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
    _staged(
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


def _staged(prefix: str, suffixes, write, why: str = "") -> None:
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
        raise _cannot(f"{prefix}: cannot write", filesystem.escape(tmp) + "*", e, kept) from None


def _cannot(what: str, leftovers: str, error: Exception, kept: str) -> InputError:
    """Removes what a failed write began (the paths the pattern `leftovers` matches) and
    returns the one line that says so."""
    for partial in filesystem.glob(leftovers):
        filesystem.discard(partial)
    return InputError(f"{what} the checkpoint ({first_line(error)}); {kept}")


class TrainingCheckpoints:
    """The training state's checkpoints (`ckpt-<step>`) in `directory`: the last `max_to_keep`,
    and a copy in `directory`/kept/ of each whose step is a multiple of `keep_every_n_steps`
    (never deleted). No directory: nothing is saved. `state`: `tf.train.Checkpoint`'s keyword
    arguments."""

    def __init__(
        self,
        state: dict,
        directory: str | None,
        max_to_keep: int = 5,
        keep_every_n_steps: int | None = None,
    ) -> None:
        if directory:
            check_checkpoint_folder(directory)
        self.checkpoint = tf.train.Checkpoint(**state)
        self.directory = directory
        self.keep_every_n_steps = keep_every_n_steps
        self.manager = None
        if directory:
            manager = tf.train.CheckpointManager
            self.manager = manager(self.checkpoint, directory, max_to_keep, checkpoint_name="ckpt")

    @property
    def latest(self) -> str | None:
        """The last checkpoint saved (or found at the start), if any."""
        return self.manager.latest_checkpoint if self.manager else None

    def restore(self, directory: str | None = None) -> str | None:
        """Restores the latest checkpoint of `directory` (default: this one's; every worker
        restores the chief's), the one before where it cannot be read; returns its path, None
        without one. Raises `InputError` where none can be read, AssertionError or ValueError
        for one of another model."""
        directory = directory or self.directory
        if not directory:
            return None
        if directory == self.directory:  # this worker's own: remove what killed saves left
            temp = os.path.join(filesystem.escape(directory), "ckpt-*_temp")
            for folder in filesystem.glob(temp):
                logger.info("removing %s (a save that did not finish)", folder)
                filesystem.rmtree(folder)
        candidates = training_checkpoints(directory)[::-1]  # the latest first
        for i, path in enumerate(candidates):
            if i:  # a newer one could not be read
                logger.warning("resuming from %s instead", os.path.basename(path))
            try:
                self.checkpoint.restore(path).assert_existing_objects_matched()
                return path
            except UNREADABLE_CHECKPOINT as e:
                logger.warning("%s cannot be read: %s", path, first_line(e))
        if candidates:
            names = ", ".join(os.path.basename(path) for path in candidates)
            raise InputError(
                f"{directory}: none of its checkpoints can be read ({names}); move them away "
                "to start again"
            )
        return None

    def save(self, step: int) -> str | None:
        """Saves `ckpt-<step>` (the manager deletes all but the last few) and, at a multiple of
        `keep_every_n_steps`, a copy in `kept/`; returns its path. A step already saved made no
        progress since: it is not rewritten (a failed rewrite would lose the good one). Raises
        `InputError` where the disk refuses it (what it began is removed, the previous stays)."""
        if self.manager is None:
            return None
        previous = self.manager.latest_checkpoint
        if previous and os.path.basename(previous) == f"ckpt-{step}":
            return previous
        try:
            path = self.manager.save(checkpoint_number=step)
        except (tf.errors.OpError, OSError) as e:
            prefix = os.path.join(self.directory, f"ckpt-{step}")
            kept = f"the previous one, {previous}, is kept" if previous else "none was saved"
            leftovers = filesystem.escape(prefix) + "[._]*"  # its files and ckpt-<step>_temp/
            raise _cannot(f"{prefix}: cannot save", leftovers, e, kept) from None
        every = self.keep_every_n_steps
        if every and step % every == 0:
            kept = os.path.join(self.directory, KEPT_CHECKPOINTS_DIR, os.path.basename(path))
            files = filesystem.glob(filesystem.escape(path) + ".*")
            suffixes = [name[len(path) :] for name in files]

            def copy(tmp: str) -> None:
                filesystem.makedirs(os.path.dirname(kept))
                for suffix in suffixes:
                    filesystem.copy(path + suffix, tmp + suffix)

            _staged(kept, suffixes, copy, why=f"{path} is saved")
            logger.info("kept a copy of %s in %s", os.path.basename(path), kept)
        return path
