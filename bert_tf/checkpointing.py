"""The files of bert_tf's training checkpoints (`ckpt-<step>` in the output_dir, kept copies in
`kept/`): which are whole, what reading a damaged one raises, and what a killed save leaves.
Below the training loop and the loaders, which both need them.
"""

from __future__ import annotations

import logging
import os
import re

import tensorflow as tf

from bert_tf import filesystem
from bert_tf.errors import InputError, first_line
from bert_tf.fileio import temporary_prefix

logger = logging.getLogger(__name__)

# Where `keep_checkpoint_every_n_steps` keeps its copies, inside the checkpoint directory.
KEPT_CHECKPOINTS_DIR = "kept"

# What reading a damaged checkpoint raises: IndexError ("Read less bytes than requested") for
# a truncated .data file, DataLossError (checksum) or another OpError for changed bytes.
UNREADABLE_CHECKPOINT = (tf.errors.OpError, IndexError)


def check_checkpoint_folder(folder: str, flag: str = "") -> None:
    """Raises `InputError` for a folder TensorFlow cannot read checkpoints back from: it finds
    a checkpoint's data files by glob pattern, so under a name with `*`, `?`, `[` or `]` the
    save works and every restore fails (a rerun would train again from step 0)."""
    if re.search(r"[*?[\]]", folder):
        raise InputError(
            f"{flag + '=' if flag else ''}{folder}: TensorFlow cannot read checkpoints back from "
            "a folder whose name has *, ?, [ or ] (it finds their files by glob pattern); "
            "give a name without them"
        )


def training_checkpoints(directory: str) -> list[str]:
    """The `ckpt-<step>` prefixes in `directory` that are whole (their index exists), oldest
    first: the one listing of a run's checkpoints. Those its `checkpoint` state file lists, as
    `tf.train.CheckpointManager` wrote it and `tf.train.latest_checkpoint` reads it (a folder
    without one: its `ckpt-<step>.index` files, the name taken literally, `[` and all)."""
    state = tf.train.get_checkpoint_state(directory) if filesystem.isdir(directory) else None
    if state is not None:
        paths = list(state.all_model_checkpoint_paths) or [state.model_checkpoint_path]
    else:
        paths = [p[: -len(".index")] for p in filesystem.glob(_escaped(directory, "ckpt-*.index"))]
    steps = {}
    for path in paths:
        found = re.fullmatch(r"ckpt-(\d+)", os.path.basename(path))
        if found and filesystem.isfile(path + ".index"):
            steps[int(found.group(1))] = os.path.join(directory, os.path.basename(path))
    return [steps[step] for step in sorted(steps)]


def latest_checkpoint(directory: str) -> str | None:
    """The last of `training_checkpoints(directory)`, or a released model's `bert_model.ckpt`
    that the state file names; None without either."""
    found = training_checkpoints(directory)
    if found:
        return found[-1]
    state = tf.train.get_checkpoint_state(directory) if filesystem.isdir(directory) else None
    prefix = state.model_checkpoint_path if state else ""
    return prefix if prefix and filesystem.isfile(prefix + ".index") else None


def _escaped(directory: str, pattern: str) -> str:
    return os.path.join(filesystem.escape(directory), pattern)


def remove_unfinished_saves(directory: str) -> None:
    """Removes the `ckpt-<step>_temp/` folders that a save killed midway leaves behind (a save
    writes there, then moves the files into place)."""
    for folder in filesystem.glob(_escaped(directory, "ckpt-*_temp")):
        logger.info("removing %s (a save that did not finish)", folder)
        remove_path(folder)


def remove_path(path: str) -> None:
    """Removes a file or a folder with what is in it."""
    if filesystem.isdir(path):
        filesystem.rmtree(path)
    else:
        filesystem.remove(path)


class TrainingCheckpoints:
    """The training state's checkpoints (`ckpt-<step>`) in `directory`: the last
    `max_to_keep` of them, and a copy of every one whose step is a multiple of
    `keep_every_n_steps` in `directory`/kept/ (never deleted; None: none kept). No directory:
    nothing is saved.

    `state`: what a checkpoint holds (`tf.train.Checkpoint`'s keyword arguments).
    """

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
        self.manager = (
            tf.train.CheckpointManager(
                self.checkpoint, directory, max_to_keep=max_to_keep, checkpoint_name="ckpt"
            )
            if directory
            else None
        )

    @property
    def latest(self) -> str | None:
        """The last checkpoint saved (or found at the start), if any."""
        return self.manager.latest_checkpoint if self.manager else None

    def restore(self, directory: str | None = None) -> str | None:
        """Restores the latest whole checkpoint in `directory` (default: this one's), falling
        back to the one before when it cannot be read; returns its path, None without one.

        Every worker of a multi-worker run restores the chief's checkpoint, though the others
        save theirs elsewhere.

        Raises:
            InputError: none of the checkpoints there can be read.
            AssertionError, ValueError: one that holds another model.
        """
        directory = directory or self.directory
        if not directory:
            return None
        if directory == self.directory:  # this worker's own: the chief's output_dir
            remove_unfinished_saves(directory)
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
        `keep_every_n_steps`, a copy in `kept/` that stays. Returns its path. A step already
        saved made no progress since: it is not written again (a failed rewrite would take the
        good checkpoint of that step with it).

        Raises:
            InputError: the disk refused it (what the save began is removed; the previous
                checkpoint stays).
        """
        if self.manager is None:
            return None
        previous = self.manager.latest_checkpoint
        if previous and os.path.basename(previous) == f"ckpt-{step}":
            return previous
        try:
            path = self.manager.save(checkpoint_number=step)
        except (tf.errors.OpError, OSError) as e:
            # A full or read-only disk: what the save began goes, the previous one stays.
            prefix = os.path.join(self.directory, f"ckpt-{step}")
            for partial in filesystem.glob(filesystem.escape(prefix) + ".*") + filesystem.glob(
                filesystem.escape(prefix) + "_temp"
            ):
                remove_path(partial)
            raise InputError(
                f"{prefix}: cannot save the checkpoint ({first_line(e)}); "
                f"{f'the previous one, {previous}, is kept' if previous else 'none was saved'}"
            ) from None
        every = self.keep_every_n_steps
        if every and step % every == 0:
            self._keep(path)
        return path

    def _keep(self, path: str) -> None:
        """A copy of `path` in kept/, each file under a temporary name renamed into place, the
        index last: a copy cut short never looks whole."""
        kept = os.path.join(self.directory, KEPT_CHECKPOINTS_DIR)
        files = sorted(
            filesystem.glob(filesystem.escape(path) + ".*"), key=lambda f: f.endswith(".index")
        )
        copies = []
        try:
            filesystem.makedirs(kept)
            for source in files:
                target = os.path.join(kept, os.path.basename(source))
                copies.append(temporary_prefix(target) + os.urandom(4).hex())
                filesystem.copy(source, copies[-1])
            for copy, source in zip(copies, files, strict=True):
                filesystem.rename(copy, os.path.join(kept, os.path.basename(source)))
        except (tf.errors.OpError, OSError) as e:
            for copy in copies:
                if filesystem.exists(copy):
                    filesystem.remove(copy)
            raise InputError(
                f"{kept}: cannot keep a copy of {path} ({first_line(e)}); {path} is saved"
            ) from None
        logger.info("kept a copy of %s in %s", os.path.basename(path), kept)
