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
from bert_tf.checkpointing import KEPT_CHECKPOINTS_DIR, training_checkpoints
from bert_tf.config import BertConfig
from bert_tf.errors import InputError, first_line
from bert_tf.fileio import atomic_open, atomic_write_text, read_text
from bert_tf.hf_config import CONFIG_FILE, is_hf_directory, read_hf_config, read_hf_values
from bert_tf.modeling.classifier import BertClassifier
from bert_tf.modeling.multiple_choice import BertMultipleChoice
from bert_tf.modeling.span_labeler import BertSpanLabeler
from bert_tf.modeling.task_model import BertTaskModel
from bert_tf.modeling.token_classifier import BertTokenClassifier
from bert_tf.tokenization import released_model_do_lower_case, tokenizer_config_do_lower_case

logger = logging.getLogger(__name__)

# The label of each output of a classifier or tagger, one a line, kept with the trained model
# in its output_dir (NER reads it back; converters name the outputs with it).
LABELS_FILE = "labels.txt"

# What task_model.json may name (checked before Keras builds anything from the file).
TASK_MODEL_CLASSES = {
    cls.__name__: cls
    for cls in (BertClassifier, BertTokenClassifier, BertSpanLabeler, BertMultipleChoice)
}

# The config files a model directory may have, in the order they are looked for: ours and
# the original's, then Hugging Face's (the same keys for BERT; the others are kept as extras).
CONFIG_FILES = ("bert_config.json", "config.json")


def model_directory(path: str | os.PathLike) -> str:
    """The directory of `path`: itself, or the folder of a checkpoint prefix given instead
    (`.../bert_model.ckpt`, `.../ckpt-300`)."""
    path = os.fspath(path)
    return filesystem.folder_of(path)


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


def fine_tuned_config(config: BertConfig, config_file: str, output_dir: str) -> BertConfig:
    """The config to resume or predict from the fine-tuning `output_dir` with: its own
    bert_config.json once it holds a checkpoint (else `config`, read from `config_file`).

    A model's attention direction belongs to its weights: `config_file` may be the shape
    alone (a left-to-right model stays causal); any other key it sets differently is an error,
    since the checkpoint was trained with the output_dir's.

    Raises:
        InputError: `config` disagrees with the output_dir's config, naming the key and both
            values.
    """
    own = os.path.join(output_dir, "bert_config.json")
    if not (filesystem.isfile(own) and training_checkpoints(output_dir)):
        return config
    trained = BertConfig.from_json_file(own)
    given = config.to_dict()
    for key, value in trained.to_dict().items():
        if key == "causal_attention":
            continue
        if given.get(key) != value:
            raise InputError(
                f"--bert_config_file={config_file}: {key}={given.get(key)!r}, but "
                f"--output_dir={output_dir} was fine-tuned with {key}={value!r} (its "
                "bert_config.json); give that config, or another --output_dir"
            )
    if trained.causal_attention and not config.causal_attention:
        logger.info("%s: fine-tuned left to right, so causal attention", own)
    return trained


def check_fine_tuned_model(output_dir: str, model) -> None:
    """Raises `InputError` when the fine-tuning `output_dir` holds a checkpoint of a task model
    other than `model` (another class, or other settings such as the feature-based layers: the
    same variables computing something else would restore silently)."""
    if not training_checkpoints(output_dir):
        return
    found = task_model_description(output_dir)
    if found is None:
        return
    built = keras.saving.serialize_keras_object(model)
    mismatches = []
    if found.get("class_name") != built["class_name"]:
        mismatches.append(f"a {found.get('class_name')}, not a {built['class_name']}")
    trained = {k: v for k, v in found.get("config", {}).items() if k not in ("config", "name")}
    settings = {k: v for k, v in built["config"].items() if k not in ("config", "name")}
    mismatches += [
        f"{key}={trained.get(key)!r}, not {settings.get(key)!r}"
        for key in sorted(set(trained) | set(settings))
        if trained.get(key) != settings.get(key)
    ]
    if mismatches:
        raise InputError(
            f"--output_dir={output_dir}: its checkpoint is of {', '.join(mismatches)} as this "
            "run's options build (its task_model.json); rerun with the options it was trained "
            "with, or give another --output_dir"
        )


def read_do_lower_case(path: str | os.PathLike) -> bool:
    """Whether the model directory `path`'s vocab is lower-cased: its tokenizer_config.json's
    `do_lower_case` (Hugging Face), else what the released model of that name was trained
    with, else True (logged: the released English models are mostly uncased)."""
    directory = model_directory(path)
    declared = tokenizer_config_do_lower_case(directory)
    if declared is not None:
        return declared
    released = released_model_do_lower_case(os.path.basename(directory.rstrip("/")))
    if released is not None:
        return released
    logger.info(
        "%s: do_lower_case=True assumed (pass do_lower_case=False for a cased model)", directory
    )
    return True


def left_to_right_config(checkpoint: str | os.PathLike) -> str | None:
    """The bert_config.json beside `checkpoint` if it says the model is causal, else None.

    run_pretraining.py writes one beside its training checkpoints and in pretrained/; a kept
    copy (`kept/ckpt-N`) goes with its run's. A Hugging Face directory says so in its
    config.json (`is_decoder`).
    """
    if is_hf_directory(checkpoint):
        path = os.path.join(os.fspath(checkpoint), CONFIG_FILE)
        return path if read_hf_config(os.fspath(checkpoint)).causal_attention else None
    checkpoint = os.fspath(checkpoint)
    # Without a trailing "/" (normpath would make gs://b of gs://b too).
    directory = filesystem.folder_of(checkpoint).rstrip("/") or "/"
    candidates = [directory]
    if os.path.basename(directory) == KEPT_CHECKPOINTS_DIR:
        candidates.append(os.path.dirname(directory))
    for candidate in candidates:
        path = os.path.join(candidate, "bert_config.json")
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
    output_dir: str, model: BertTaskModel, vocab_file: str, do_lower_case: bool, task: str = ""
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
        description = {
            "class_name": model["class_name"],
            "config": dict(model["config"]),
            "do_lower_case": bool(values["do_lower_case"]),
            "task": values.get("task", ""),
        }
    except (ValueError, KeyError, TypeError) as e:
        raise InputError(f"{path}: not a task model description ({first_line(e)})") from None
    return description


def fine_tuned_task(directory: str) -> tuple[str, str] | None:
    """(task, model class) that `directory`'s `TASK_MODEL_FILE` says was fine-tuned there
    ("" for a task written before tasks were recorded); None without one."""
    description = task_model_description(directory)
    return None if description is None else (description["task"], description["class_name"])


def read_task_model(directory: str) -> tuple[BertTaskModel, bool]:
    """The task model that `directory`'s `TASK_MODEL_FILE` describes (newly initialized) and
    the casing it was trained with.

    Raises:
        InputError: the file is not such a description.
    """
    path = os.path.join(directory, TASK_MODEL_FILE)
    description = task_model_description(directory)
    # The class is checked before Keras builds anything the file names.
    class_name = description.get("class_name")
    if class_name not in TASK_MODEL_CLASSES:
        raise InputError(
            f"{path}: describes a {class_name!r}, not a task model (expected one of "
            f"{', '.join(TASK_MODEL_CLASSES)})"
        )
    try:
        model = TASK_MODEL_CLASSES[class_name].from_config(description["config"])
    except (ValueError, KeyError, TypeError, InputError) as e:
        raise InputError(f"{path}: not a task model description ({first_line(e)})") from None
    return model, description["do_lower_case"]


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
