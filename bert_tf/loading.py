"""Loading a model's weights from any kind of checkpoint, one entry for all: the original's
names, a bert_tf training checkpoint, a Hugging Face directory.

    report = load_checkpoint(BertEncoder(config), "uncased_L-12_H-768_A-12/bert_model.ckpt")
"""

from __future__ import annotations

import dataclasses
import os

import keras

from bert_tf import checkpoints, hf_checkpoints
from bert_tf.checkpointing import UNREADABLE_CHECKPOINT
from bert_tf.checkpoints import LoadReport
from bert_tf.errors import InputError, first_line


def load_checkpoint(model: keras.Model, checkpoint: str | os.PathLike) -> LoadReport:
    """Loads `model` (a `BertEncoder`, `BertPretrainer` or fine-tuning `BertTaskModel`) from
    any kind of checkpoint, by one rule for all: the encoder must be whole, each head is loaded
    when the checkpoint has it and keeps its initial values when it has none.

    - the original's names (`checkpoints.load_original_checkpoint`): a prefix such as
      `.../bert_model.ckpt`, one of its files, or its directory;
    - a bert_tf training checkpoint (`ckpt-<step>`, or its directory's latest), by Keras path
      (`checkpoints.load_object_based`);
    - a Hugging Face BERT directory: config.json and model.safetensors
      (`hf_checkpoints.load_hf_checkpoint`).

    Optimizer state is not loaded. Returns what was loaded, by the checkpoint's names, with
    `source` the prefix (the directory for Hugging Face's).

    Raises:
        InputError: no checkpoint there, one that cannot be read, no encoder in it, or
            variables that do not fit the model.
    """
    if hf_checkpoints.is_hf_directory(checkpoint):
        report = hf_checkpoints.load_hf_checkpoint(model, checkpoint)
        return dataclasses.replace(report, source=os.fspath(checkpoint))
    prefix = checkpoints.resolve_checkpoint_path(checkpoint)
    try:
        if checkpoints.is_object_based(prefix):
            report = checkpoints.load_object_based(model, prefix)
        else:
            report = checkpoints.load_original_checkpoint(model, prefix)
    except UNREADABLE_CHECKPOINT as e:
        raise InputError(
            f"{prefix}: the checkpoint cannot be read ({first_line(e)}); it is truncated or "
            "damaged: copy or download it again"
        ) from None
    return dataclasses.replace(report, source=prefix)
