"""A model directory, read: which of its files say what about the model, before any weight is
loaded. A model directory is any of:
- a released model, or run_pretraining.py's `pretrained/`: bert_config.json, bert_model.ckpt
  (the original's variable names), vocab.txt;
- a bert_tf training output_dir: bert_config.json beside `ckpt-<step>`; a fine-tuning one also
  task_model.json (the task model's class and settings, the casing) and vocab.txt;
- a Hugging Face directory: config.json, model.safetensors, vocab.txt, tokenizer_config.json.
"""

from __future__ import annotations

import json
import logging
import os

import keras

from bert_tf import filesystem
from bert_tf.checkpointing import KEPT_CHECKPOINTS_DIR
from bert_tf.checkpoints import checkpoint_prefix, resolve_checkpoint_path
from bert_tf.config import BertConfig
from bert_tf.errors import InputError, first_line
from bert_tf.fileio import atomic_open, atomic_write_text, read_text
from bert_tf.hf_format import (
    CONFIG_FILE,
    TOKENIZER_CONFIG_FILE,
    is_hf_directory,
    read_hf_config,
    read_hf_values,
)
from bert_tf.tokenization import checkpoint_model_name, released_model_do_lower_case

logger = logging.getLogger(__name__)

# The label of each output of a classifier or tagger, one a line, kept with the trained model
# in its output_dir (NER reads it back; converters name the outputs with it).
LABELS_FILE = "labels.txt"

# The config files a model directory may have, in the order they are looked for: ours and
# the original's, then Hugging Face's (the same keys for BERT; the others are kept as extras).
CONFIG_FILES = ("bert_config.json", "config.json")


def model_directory(path: str | os.PathLike) -> str:
    """The directory of `path`: itself, or the folder of a checkpoint prefix given instead
    (`.../bert_model.ckpt`, `.../ckpt-300`); a kept copy's (`OUT/kept/ckpt-8000`) is its run's."""
    directory = filesystem.folder_of(os.fspath(path)).rstrip("/") or "/"
    if os.path.basename(directory) == KEPT_CHECKPOINTS_DIR:
        return os.path.dirname(directory)
    return directory


def weights_path(path: str | os.PathLike) -> str:
    """The weights `path` means, by one rule for every kind: a checkpoint prefix (or one of its
    files) is that checkpoint, whatever else its folder holds (`OUT/ckpt-2` is step 2); a
    Hugging Face directory is its safetensors; a training output_dir is its latest checkpoint
    by its state file; a released model's folder (or `pretrained/`, which run_pretraining.py
    exports at its end) is its bert_model.ckpt.

    Raises:
        InputError: none of these, naming the path.
    """
    path = os.fspath(path)
    named = checkpoint_prefix(path)
    if named is None and is_hf_directory(path):
        return path
    if named is None and filesystem.isdir(path):
        names = " or ".join(CONFIG_FILES)
        if not any(filesystem.isfile(os.path.join(path, name)) for name in CONFIG_FILES):
            raise InputError(f"{path}: no {names} and no checkpoint; expected a model directory")
    # A released zip has no `checkpoint` state file: its folder's bert_model.ckpt, then.
    return resolve_checkpoint_path(path)


def read_config(path: str | os.PathLike) -> BertConfig:
    """The `BertConfig` of the model directory `path` (see `CONFIG_FILES`).

    Raises:
        InputError: no config there, or a Hugging Face config of another model type.
    """
    directory = model_directory(path)
    for name in CONFIG_FILES:
        config_file = os.path.join(directory, name)
        if filesystem.isfile(config_file):
            break
    else:
        raise InputError(
            f"{directory}: no {' or '.join(CONFIG_FILES)} in this model directory; pass "
            "config=BertConfig.from_json_file(...) (the config the checkpoint was trained with)"
        )
    if name == "config.json":  # Hugging Face's names and activations, mapped to ours
        return read_hf_config(directory)
    return BertConfig.from_json_file(config_file)


def read_do_lower_case(path: str | os.PathLike, given: bool | None = None, flag: str = "") -> bool:
    """Whether the model of `path` lower-cases its text, by one rule: what the model's own
    files say (task_model.json, Hugging Face's tokenizer_config.json), else its name as the
    original's `validate_case_matches_checkpoint` reads it (a released model's folder), else
    `given` (a casing flag; None: ask the model), else True (logged: the released English
    models are mostly uncased).

    Raises:
        InputError: `given` contradicts the model's files or name, naming both (and `flag`,
            the option that gave `path`).
    """
    directory = model_directory(path)
    description = task_model_description(directory)
    tokenizer = os.path.join(directory, TOKENIZER_CONFIG_FILE)
    name = checkpoint_model_name(path) or os.path.basename(directory.rstrip("/"))
    if description is not None:
        said, why = description["do_lower_case"], f"its {TASK_MODEL_FILE} says"
    elif filesystem.isfile(tokenizer):
        said = read_hf_values(directory, TOKENIZER_CONFIG_FILE).get("do_lower_case")
        why = f"its {TOKENIZER_CONFIG_FILE} says"
    else:
        said = released_model_do_lower_case(name)
        why = f"`{name}` is a {'lower-cased' if said else 'cased'} model, so"
    if said is None:
        if given is None:
            logger.info("%s: do_lower_case=True assumed (pass False for a cased model)", path)
        return True if given is None else given
    if given is not None and bool(given) != bool(said):
        where = f"{flag}={os.fspath(path)}" if flag else os.fspath(path)
        raise InputError(
            f"--do_lower_case={given} does not match {where}: {why} do_lower_case="
            f"{bool(said)}; pass --do_lower_case={bool(said)} to use it as it was trained"
        )
    return bool(said)


def left_to_right_config(checkpoint: str | os.PathLike) -> str | None:
    """The bert_config.json beside `checkpoint` if it says the model is causal, else None.

    run_pretraining.py writes one beside its training checkpoints and in pretrained/; a kept
    copy (`kept/ckpt-N`) goes with its run's. A Hugging Face directory says so in its
    config.json (`is_decoder`).
    """
    if is_hf_directory(checkpoint):
        path = os.path.join(os.fspath(checkpoint), CONFIG_FILE)
        return path if read_hf_config(os.fspath(checkpoint)).causal_attention else None
    path = os.path.join(model_directory(checkpoint), "bert_config.json")
    if filesystem.isfile(path):
        return path if BertConfig.from_json_file(path).causal_attention else None
    return None


def adopt_checkpoint_attention(config: BertConfig, checkpoint: str | os.PathLike) -> BertConfig:
    """`config`, made causal when `checkpoint` was pre-trained left to right.

    The attention direction belongs to the weights: a left-to-right model stays causal,
    whichever bert_config.json names its shape (see `left_to_right_config`).
    """
    if config.causal_attention:
        return config
    causal_config = left_to_right_config(checkpoint)
    if causal_config:
        logger.info("%s: pre-trained left to right, so causal attention", causal_config)
        config = config.replace(causal_attention=True)
    return config


# What the fine-tuning scripts write beside their checkpoints, so that a fine-tuned output_dir
# is a model directory on its own (as pretrained/ is): bert_config.json and vocab.txt, and the
# task model's class and settings (its Keras config) with the casing it was trained with.
TASK_MODEL_FILE = "task_model.json"


def write_task_model_files(
    output_dir: str, model: keras.Model, vocab_file: str, do_lower_case: bool, task: str = ""
) -> None:
    """Writes bert_config.json, vocab.txt and `TASK_MODEL_FILE` (with the `task` fine-tuned,
    e.g. "MRPC") into `output_dir`."""
    model.config.to_json_file(os.path.join(output_dir, "bert_config.json"))
    with (
        filesystem.open_file(vocab_file, "rb") as source,
        atomic_open(os.path.join(output_dir, "vocab.txt"), "wb") as target,
    ):
        target.write(source.read())
    description = {
        "model": keras.saving.serialize_keras_object(model),
        "do_lower_case": do_lower_case,
    }
    if task:
        description["task"] = task
    atomic_write_text(
        os.path.join(output_dir, TASK_MODEL_FILE), json.dumps(description, indent=2) + "\n"
    )


def task_model_description(directory: str) -> dict | None:
    """`directory`'s `TASK_MODEL_FILE`, parsed and checked (the one reader of what
    `write_task_model_files` writes): the model's Keras description (`class_name`, `config`)
    with `do_lower_case` and `task` ("" where not recorded); None where there is none.

    Raises:
        InputError: the file is not such a description.
    """
    path = os.path.join(directory, TASK_MODEL_FILE)
    if not filesystem.isfile(path):
        return None
    try:
        values = json.loads(read_text(path, "a task model description (JSON)"))
        model = values["model"]
        if not isinstance(model["class_name"], str):
            raise TypeError(f"class_name={model['class_name']!r}, expected a class's name")
        description = {
            "class_name": model["class_name"],
            "config": dict(model["config"]),
            "do_lower_case": bool(values["do_lower_case"]),
            "task": values.get("task", ""),
        }
    except (ValueError, KeyError, TypeError) as e:
        raise InputError(f"{path}: not a task model description ({first_line(e)})") from None
    return description


def read_labels(directory: str) -> list[str] | None:
    """`LABELS_FILE`'s labels, else a Hugging Face config's id2label; None without either."""
    path = os.path.join(directory, LABELS_FILE)
    if filesystem.isfile(path):
        return [
            line.strip()
            for line in read_text(path, "labels, one a line").splitlines()
            if line.strip()
        ]
    if is_hf_directory(directory):
        id2label = read_hf_values(directory).get("id2label") or {}
        labels = [id2label[key] for key in sorted(id2label, key=int)]
        if labels and labels != [f"LABEL_{i}" for i in range(len(labels))]:
            return labels
    return None
