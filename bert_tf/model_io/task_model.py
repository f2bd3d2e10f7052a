"""task_model.json, the file that says which task model a directory holds (its class and
settings, its casing, the task fine-tuned), and the rules that read it: whose head an init
checkpoint may give a model, and whether a fine-tuning output_dir holds this run's model
before a rerun resumes, evaluates or predicts there (the same variables computing something
else would restore silently). `ModelSource` answers each as its own method.
"""

from __future__ import annotations

import json
import logging
import os
from typing import TYPE_CHECKING

import keras

from bert_tf.config import BertConfig
from bert_tf.errors import InputError, first_line
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text, read_text
from bert_tf.model_io.checkpoints import training_checkpoints

if TYPE_CHECKING:
    from bert_tf.model_io.source import ModelSource

logger = logging.getLogger(__name__)

# What a fine-tuning run writes beside bert_config.json and vocab.txt, so that its output_dir
# is a model directory: the task model's class and settings, and the casing it was trained with.
TASK_MODEL_FILE = "task_model.json"


def read_description(directory: str) -> dict | None:
    """`directory`'s `TASK_MODEL_FILE`, checked: `class_name`, `config` (the model's Keras
    description), `do_lower_case`, `task` ("" where not recorded); None without one. Raises
    `InputError` for a file that is not one."""
    path = os.path.join(directory, TASK_MODEL_FILE)
    if not filesystem.isfile(path):
        return None
    try:
        values = json.loads(read_text(path, "a task model description (JSON)"))
        model = values["model"]
        if not isinstance(model["class_name"], str):
            raise TypeError(f"class_name={model['class_name']!r}, expected a class's name")
        return {
            "class_name": model["class_name"],
            "config": dict(model["config"]),
            "do_lower_case": bool(values["do_lower_case"]),
            "task": values.get("task", ""),
        }
    except (ValueError, KeyError, TypeError) as e:
        raise InputError(f"{path}: not a task model description ({first_line(e)})") from None


def write_description(directory: str, model: keras.Model, do_lower_case: bool, task: str) -> None:
    """Writes `TASK_MODEL_FILE` (with the `task` fine-tuned, e.g. "MRPC"): what
    `read_description` reads back."""
    description = {"model": keras.saving.serialize_keras_object(model)}
    description |= {"do_lower_case": do_lower_case} | ({"task": task} if task else {})
    path = os.path.join(directory, TASK_MODEL_FILE)
    atomic_write_text(path, json.dumps(description, indent=2) + "\n")


def described_class(
    description: dict | None, directory: str, family: list[type]
) -> tuple[type, str, list[int]] | None:
    """The class `description` names among `family`, the file that says so and [] (no head
    shape is read); None without a description. Raises `InputError` for a class not there."""
    if description is None:
        return None
    name = description["class_name"]
    said = os.path.join(directory, TASK_MODEL_FILE)
    found = next((c for c in family if c.__name__ == name), None)
    if found is None:
        raise InputError(
            f"{said}: describes a {name!r}, not one of bert_tf's models (expected "
            f"{', '.join(sorted(c.__name__ for c in family if c.hf_architecture))})"
        )
    return found, said, []


def differences(description: dict | None, model: keras.Model) -> list[str]:
    """What the task model `description` has otherwise than `model`: its class first, then each
    setting ("num_labels=3, not 2"); [] where it is the same (or none is described)."""
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


def head_mismatch(source: ModelSource, model: keras.Model, labels: list[str] | None) -> str:
    """Why the task head `source` holds is not `model`'s to take ("" where it is, or where it
    holds none): another class (a NER model's, for a classifier: both heads live under the
    same names), other settings (3 labels, or a feature-based tagger's BiLSTM), or other
    labels (RTE's from MRPC's). A head for the same labels carries over: AX is MNLI's."""
    saved, said, _ = source.saved_class(type(model))
    if saved.head_scope is None:
        return ""
    if saved is not type(model):
        return f"holds a {saved.__name__} ({said})"
    differ = differences(source.description, model)
    if differ:
        return f"holds a {saved.__name__} with {', '.join(differ)} ({said})"
    if labels and source.labels and source.labels != labels:
        task = f" fine-tuned on {source.task}" if source.task else ""
        return (
            f"holds a {saved.__name__}{task} for the labels {' '.join(source.labels)}, not "
            f"{' '.join(labels)}"
        )
    return ""


def _trained(source: ModelSource) -> bool:
    return bool(training_checkpoints(source.directory))


def check_task(source: ModelSource, task: str) -> None:
    """Raises `InputError` when the output_dir `source` holds a model fine-tuned on another
    task, which this run would resume (or evaluate) as if it were its own, and whose results
    it would overwrite."""
    found = source.description if _trained(source) else None
    if found and found["task"] and found["task"] != task:
        raise InputError(
            f"--output_dir={source.path}: holds a {found['class_name']} fine-tuned on "
            f"{found['task']}, not on {task}; give each task an --output_dir of its own"
        )


def trained_config(source: ModelSource, config: BertConfig, config_file: str) -> BertConfig:
    """The config to resume or predict from the fine-tuning output_dir `source` with: its own
    bert_config.json once it holds a checkpoint (else `config`, read from `config_file`). The
    attention direction belongs to the weights (a `config_file` of the shape alone leaves a
    left-to-right model causal); any other key set otherwise is an `InputError` naming both."""
    own = os.path.join(source.directory, "bert_config.json")
    if not (filesystem.isfile(own) and _trained(source)):
        return config
    trained = BertConfig.from_json_file(own)
    given = config.to_dict()
    for key, value in trained.to_dict().items():
        if key != "causal_attention" and given.get(key) != value:
            raise InputError(
                f"--bert_config_file={config_file}: {key}={given.get(key)!r}, but "
                f"--output_dir={source.path} was fine-tuned with {key}={value!r} (its "
                "bert_config.json); give that config, or another --output_dir"
            )
    if trained.causal_attention and not config.causal_attention:
        logger.info("%s: fine-tuned left to right, so causal attention", own)
    return trained


def check_same_model(
    source: ModelSource, model: keras.Model, do_lower_case: bool, vocab_file: str
) -> None:
    """Raises `InputError` when the fine-tuning output_dir `source` holds a checkpoint of a
    task model other than this run's: another class, other settings (the feature-based
    layers), another casing or another vocab; the rerun would also write its task_model.json
    over the one that says so."""
    found = source.description if _trained(source) else None
    if found is None:
        return
    mismatches = differences(found, model)
    if found["do_lower_case"] != do_lower_case:
        mismatches.append(f"do_lower_case={found['do_lower_case']}, not {do_lower_case}")
    if source.vocab_file and _read_bytes(source.vocab_file) != _read_bytes(vocab_file):
        mismatches.append(f"its vocab.txt, not --vocab_file={vocab_file}")
    if mismatches:
        raise InputError(
            f"--output_dir={source.path}: its checkpoint is of {', '.join(mismatches)} as "
            "this run's options build (its task_model.json); rerun with the options it was "
            "trained with, or give another --output_dir"
        )


def _read_bytes(path: str) -> bytes:
    with filesystem.open_file(path, "rb") as f:
        return f.read()
