"""A trainer's model from its --init_checkpoint: its encoder always, its head only where the
checkpoint's computes the same (the model directory's rule, `ModelSource.head_mismatch`), and
the one line where a model to evaluate or export without training would keep a random head."""

from __future__ import annotations

import logging

import keras

from bert_tf.errors import InputError
from bert_tf.model_io.loading import LoadReport, load_checkpoint
from bert_tf.model_io.source import ModelSource
from bert_tf.training.options import TrainerSettings

logger = logging.getLogger(__name__)


def initialize(
    model: keras.Model,
    source: ModelSource,
    settings: TrainerSettings,
    labels: list[str] | None = None,
) -> LoadReport:
    """`model` from the init checkpoint `source`, its head too where the checkpoint holds one
    that computes the same (`ModelSource.head_mismatch`), else its encoder only (a warning: the head
    starts new). A model to evaluate or export without training must get its head there."""
    mismatch = source.head_mismatch(model, labels)
    if mismatch:
        logger.warning(
            "--init_checkpoint=%s %s: only its encoder is loaded, the %s head starts new",
            source.path, mismatch, type(model).__name__,
        )  # fmt: skip
    report = load_checkpoint(model, source, encoder_only=bool(mismatch))
    logger.info("initializing from %s", report.source)
    if not settings.do_train and model.head_variables() and not report.head_loaded:
        raise InputError(
            f"--init_checkpoint={settings.init_checkpoint} has no {type(model).__name__} "
            f"head, and --output_dir={settings.output_dir} no checkpoint: without "
            "--do_train the head would be random; train first, or give the checkpoint of "
            "a fine-tuned model"
        )
    return report
