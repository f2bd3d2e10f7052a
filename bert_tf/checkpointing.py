"""The files of bert_tf's training checkpoints (`ckpt-<step>` in the output_dir, kept copies in
`kept/`): which are whole, what reading a damaged one raises, and what a killed save leaves.
Below the training loop and the loaders, which both need them.
"""

from __future__ import annotations

import logging
import os

import tensorflow as tf

logger = logging.getLogger(__name__)

# Where `keep_checkpoint_every_n_steps` keeps its copies, inside the checkpoint directory.
KEPT_CHECKPOINTS_DIR = "kept"

# What reading a damaged checkpoint raises: IndexError ("Read less bytes than requested") for
# a truncated .data file, DataLossError (checksum) or another OpError for changed bytes.
UNREADABLE_CHECKPOINT = (tf.errors.OpError, IndexError)


def training_checkpoints(directory: str) -> list[str]:
    """The `ckpt-<step>` prefixes in `directory` whose index exists (a checkpoint is whole once
    its index is written), oldest first."""
    steps = []
    for index in tf.io.gfile.glob(os.path.join(directory, "ckpt-*.index")):
        step = os.path.basename(index)[len("ckpt-") : -len(".index")]
        if step.isdigit():
            steps.append(int(step))
    return [os.path.join(directory, f"ckpt-{step}") for step in sorted(steps)]


def remove_unfinished_saves(directory: str) -> None:
    """Removes the `ckpt-<step>_temp/` folders that a save killed midway leaves behind (a save
    writes there, then moves the files into place)."""
    for folder in tf.io.gfile.glob(os.path.join(directory, "ckpt-*_temp")):
        logger.info("removing %s (a save that did not finish)", folder)
        remove_path(folder)


def remove_path(path: str) -> None:
    """Removes a file or a folder with what is in it."""
    if tf.io.gfile.isdir(path):
        tf.io.gfile.rmtree(path)
    else:
        tf.io.gfile.remove(path)
