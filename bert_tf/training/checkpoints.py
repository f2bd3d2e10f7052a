"""The training state's checkpoints (`ckpt-<step>` in an output_dir: the model, the optimizer's
slots and the step), saved and restored as the training loop needs them: the last few, a kept
copy every n steps, a damaged latest passed over for the one before. What reads a model out of
them is `bert_tf.model_io`."""

from __future__ import annotations

import logging
import os
import re

import tensorflow as tf

from bert_tf.errors import InputError, first_line
from bert_tf.io import filesystem
from bert_tf.model_io.checkpoints import (
    KEPT_CHECKPOINTS_DIR,
    UNREADABLE_CHECKPOINT,
    checkpoint_reader,
    failed_write,
    training_checkpoints,
    write_staged,
)

logger = logging.getLogger(__name__)


def check_checkpoint_folder(folder: str, flag: str = "") -> None:
    """Raises `InputError` for a folder whose name has `*`, `?`, `[` or `]`: TensorFlow finds a
    checkpoint's files by glob pattern, so there every save works and every restore fails."""
    if re.search(r"[*?[\]]", folder):
        raise InputError(
            f"{flag + '=' if flag else ''}{folder}: TensorFlow cannot read checkpoints back from "
            "a folder whose name has *, ?, [ or ] (it finds their files by glob pattern); "
            "give a name without them"
        )


class TrainingCheckpoints:
    """The training state's checkpoints (`ckpt-<step>`) in `directory`: the last `max_to_keep`,
    and a copy in `directory`/kept/ of each whose step is a multiple of `keep_every_n_steps`
    (never deleted). No directory: nothing is saved. `chief_directory`: where the chief saves
    the same steps, on a worker that saves its own copies to scratch (what its messages name).
    `state`: `tf.train.Checkpoint`'s keyword
    arguments; `random_state`: the dropout layers' seed generators' state (Keras's
    `model.variables` beyond its `weights`), saved too so that a resumed run draws the masks
    an uninterrupted one would, and restored where a checkpoint has it (one written before it
    was saved resumes without)."""

    def __init__(
        self,
        state: dict,
        directory: str | None,
        max_to_keep: int = 5,
        keep_every_n_steps: int | None = None,
        random_state: list | None = None,
        chief_directory: str | None = None,
    ) -> None:
        if directory:
            check_checkpoint_folder(directory)
        random_state = list(random_state or [])
        self.checkpoint = tf.train.Checkpoint(**state, random_state=random_state)
        self.state = tf.train.Checkpoint(**state)  # what every checkpoint must match
        self.random_state = tf.train.Checkpoint(random_state=random_state) if random_state else None
        self.directory = directory
        self.chief_directory = chief_directory or directory
        self.keep_every_n_steps = keep_every_n_steps
        self.manager = None
        if directory:
            manager = tf.train.CheckpointManager
            self.manager = manager(self.checkpoint, directory, max_to_keep, checkpoint_name="ckpt")

    @property
    def latest(self) -> str | None:
        """The last checkpoint saved (or found at the start), if any: the chief's (a worker's
        own copy in its scratch is not for the user to resume from)."""
        path = self.manager.latest_checkpoint if self.manager else None
        return os.path.join(self.chief_directory, os.path.basename(path)) if path else None

    def last_complete(self) -> str | None:
        """The chief's latest checkpoint on disk, whole (its .index written), if any: what a
        restarted group resumes from, where the chief may have been lost in a save."""
        if not self.chief_directory:
            return None
        try:
            found = training_checkpoints(self.chief_directory)
        except (tf.errors.OpError, OSError):  # where the chief's folder cannot be read now
            return self.latest
        return found[-1] if found else None

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
                # (The random state, in the file too, is restored apart: expect_partial.)
                self.state.restore(path).assert_existing_objects_matched().expect_partial()
                self._restore_random_state(path)
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

    def _restore_random_state(self, path: str) -> None:
        if self.random_state is None:
            return
        names = checkpoint_reader(path).get_variable_to_shape_map()
        if any(name.startswith("random_state/") for name in names):
            self.random_state.restore(path).expect_partial()
        else:
            logger.info(
                "%s holds no dropout random state (written before it was saved): the "
                "dropout masks from here on are not an uninterrupted run's", path,
            )  # fmt: skip

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
            raise failed_write(f"{prefix}: cannot save", leftovers, e, kept) from None
        every = self.keep_every_n_steps
        if every and step % every == 0:
            kept = os.path.join(self.directory, KEPT_CHECKPOINTS_DIR, os.path.basename(path))
            files = filesystem.glob(filesystem.escape(path) + ".*")
            suffixes = [name[len(path) :] for name in files]

            def copy(tmp: str) -> None:
                filesystem.makedirs(os.path.dirname(kept))
                for suffix in suffixes:
                    filesystem.copy(path + suffix, tmp + suffix)

            write_staged(kept, suffixes, copy, why=f"{path} is saved")
            logger.info("kept a copy of %s in %s", os.path.basename(path), kept)
        return path
