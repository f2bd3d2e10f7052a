"""The init-checkpoint policy of a trainer: which of a model's weights an --init_checkpoint gives it
(its encoder always; its head only where the checkpoint's computes the same), and the one line
where a model to evaluate or export without training would keep a random head."""

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
    that computes the same (`head_mismatch`), else its encoder only (a warning: the head
    starts new). A model to evaluate or export without training must get its head there."""
    mismatch = head_mismatch(model, source, labels)
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


def head_mismatch(model: keras.Model, source: ModelSource, labels: list[str] | None) -> str:
    """Why the task head `source` holds is not `model`'s to take ("" where it is, or where it
    holds none): another class (a NER model's, for a classifier: both heads live under the
    same names), other settings (3 labels, or a feature-based tagger's BiLSTM), or other
    labels (RTE's from MRPC's). A head for the same labels carries over: AX is MNLI's."""
    saved, said, _ = source.saved_class(type(model))
    if saved is None or saved.head_scope is None:
        return ""
    if saved is not type(model):
        return f"holds a {saved.__name__} ({said})"
    differ = task_model_differences(source.description, model)
    if differ:
        return f"holds a {saved.__name__} with {', '.join(differ)} ({said})"
    if labels and source.labels and source.labels != labels:
        task = f" fine-tuned on {source.task}" if source.task else ""
        return (
            f"holds a {saved.__name__}{task} for the labels {' '.join(source.labels)}, not "
            f"{' '.join(labels)}"
        )
    return ""


def task_model_differences(description: dict | None, model: keras.Model) -> list[str]:
    """What the task model `description` (task_model.json's) has otherwise than `model`: its
    class first, then each setting ("num_labels=3, not 2"); [] where it is the same (or none
    is described). The same variables computing something else would load silently."""
    if description is None:
        return []
    built = keras.saving.serialize_keras_object(model)
    found = [] if description["class_name"] == built["class_name"] else [
        f"a {description['class_name']}, not a {built['class_name']}"
    ]  # fmt: skip
    trained, settings = description["config"], built["config"]
    keys = sorted((set(trained) | set(settings)) - {"config", "name"})
    found += [
        f"{key}={trained.get(key)!r}, not {settings.get(key)!r}"
        for key in keys
        if trained.get(key) != settings.get(key)
    ]
    return found
