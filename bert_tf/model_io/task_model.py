"""task_model.json, the file that says which task model a directory holds (its class and
settings, its casing, the task fine-tuned): written, read and compared with a model here;
`ModelSource` reads it for the class, casing and task, and for its checks of an init
checkpoint's head and of a fine-tuning output_dir.
"""

from __future__ import annotations

import json
import logging
import os

import keras

from bert_tf.errors import InputError, first_line
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text, read_text

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
