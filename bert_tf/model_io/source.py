"""A model's files, resolved once: `ModelSource(path)` knows what a model directory (or a
checkpoint in one) holds: its format, weights, config, casing, labels, task and class, and its
attention direction. Every user is handed the one object: the fine-tuning driver, the trainer's
initialization, NER's labels, the converter, extract_features.py, fill_mask.py and
`from_pretrained`; each rule below is decided here only.

A model directory is a released model or run_pretraining.py's `pretrained/` (bert_config.json,
bert_model.ckpt, vocab.txt), a training output_dir (bert_config.json beside `ckpt-<step>`; a
fine-tuning one also task_model.json, vocab.txt, labels.txt), or a Hugging Face one
(config.json, model.safetensors, vocab.txt, tokenizer_config.json). As keras-hub's
`get_preset_loader` and `check_config_class`, the class is found among the subclasses of the
one the caller hands in: this package imports no model class.

    source = ModelSource("output/mrpc")
    source.config, source.labels, source.do_lower_case(), source.task   # BertConfig, [...], ...
"""

from __future__ import annotations

import functools
import json
import logging
import os

import keras

from bert_tf.config import BertConfig
from bert_tf.errors import InputError, first_line
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_open, atomic_write_text, read_text
from bert_tf.model_io import checkpoints, hf_format
from bert_tf.text.casing import decide_do_lower_case
from bert_tf.tokenization import checkpoint_model_name, released_model_do_lower_case

logger = logging.getLogger(__name__)

# The label of each output of a classifier or tagger, one a line (NER reads it back).
LABELS_FILE = "labels.txt"
# The config files of a model directory, in the order they are looked for (the original's).
CONFIG_FILES = ("bert_config.json", "config.json")
# What a fine-tuning run writes beside bert_config.json and vocab.txt, so that its output_dir
# is a model directory: the task model's class and settings, and the casing it was trained with.
TASK_MODEL_FILE = "task_model.json"


def model_directory(path: str | os.PathLike) -> str:
    """`path`, or the folder of the checkpoint prefix it is (`OUT/ckpt-300`: OUT); a kept
    copy's (`OUT/kept/ckpt-8000`) is its run's."""
    directory = filesystem.folder_of(os.fspath(path)).rstrip("/") or "/"
    if os.path.basename(directory) == checkpoints.KEPT_CHECKPOINTS_DIR:
        return os.path.dirname(directory)
    return directory


def weights_path(path: str) -> str:
    """The weights `path` means, by one rule for every kind: a checkpoint prefix (or one of its
    files) is that checkpoint (`OUT/ckpt-2` is step 2); a Hugging Face directory its
    safetensors; a training output_dir its latest checkpoint by its state file; a released
    model's folder (or `pretrained/`) its bert_model.ckpt. Raises `InputError` for none."""
    if checkpoints.checkpoint_prefix(path) is None and filesystem.isdir(path):
        if hf_format.is_hf_directory(path):
            return path
        if _config_file(path) is None and checkpoints.latest_checkpoint(path) is None:
            names = " or ".join(CONFIG_FILES)
            raise InputError(f"{path}: no {names} and no checkpoint; expected a model directory")
    return checkpoints.resolve_checkpoint_path(path)


def _config_file(directory: str) -> str | None:
    paths = (os.path.join(directory, name) for name in CONFIG_FILES)
    return next((path for path in paths if filesystem.isfile(path)), None)


def task_model_description(directory: str) -> dict | None:
    """`directory`'s `TASK_MODEL_FILE` (`write_task_model_files`'s), checked: `class_name`,
    `config` (the model's Keras description), `do_lower_case`, `task` ("" where not
    recorded); None without one. Raises `InputError` for a file that is not one."""
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


def model_classes(base: type) -> list[type]:
    """`base` and every class derived from it (the model classes the caller's import made)."""
    found, new = [], [base]
    while new:
        cls = new.pop()
        found.append(cls)
        new += [sub for sub in cls.__subclasses__() if sub not in found]
    return found


def root_class(cls: type) -> type:
    """The first class of `cls`'s family: the one that declares the name table."""
    return [c for c in cls.__mro__ if "original_variable_names" in vars(c)][-1]


class ModelSource:
    """The files of the model directory (or checkpoint) `path`, each read when first asked for,
    and once. Its weights are looked for then too: a folder with only a vocab.txt and a
    config is a source of casing (`BertPreprocessor`); `weights` raises `InputError` there."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        self.directory = model_directory(self.path)
        self._saved_classes: dict[type, tuple] = {}  # `saved_class`'s, by family

    @functools.cached_property
    def weights(self) -> str:
        """The checkpoint prefix, or the Hugging Face folder (`weights_path`)."""
        return weights_path(self.path)

    @functools.cached_property
    def is_hf(self) -> bool:
        return hf_format.is_hf_directory(self.weights)

    @functools.cached_property
    def hf_weights(self) -> hf_format.HfWeights:
        return hf_format.HfWeights(self.directory)

    @functools.cached_property
    def hf_values(self) -> dict:
        return hf_format.read_hf_values(self.directory)

    @functools.cached_property
    def reader(self):
        return checkpoints.checkpoint_reader(self.weights)

    @functools.cached_property
    def description(self) -> dict | None:
        return task_model_description(self.directory)

    @property
    def task(self) -> str:
        """The task fine-tuned here ("" where none is recorded)."""
        return (self.description or {}).get("task", "")

    @functools.cached_property
    def config(self) -> BertConfig:
        """The directory's `BertConfig` (see `CONFIG_FILES`; Hugging Face's names mapped)."""
        found = _config_file(self.directory)
        if found is None:
            raise InputError(
                f"{self.directory}: no {' or '.join(CONFIG_FILES)} in this model directory; "
                "pass config=BertConfig.from_json_file(...) (the config it was trained with)"
            )
        if os.path.basename(found) == hf_format.CONFIG_FILE:
            return hf_format.read_hf_config(self.directory)
        return BertConfig.from_json_file(found)

    @functools.cached_property
    def vocab_file(self) -> str | None:
        own = os.path.join(self.directory, "vocab.txt")
        return own if filesystem.isfile(own) else None

    @functools.cached_property
    def labels(self) -> list[str] | None:
        """labels.txt's labels, else a Hugging Face config's named id2label; None without."""
        path = os.path.join(self.directory, LABELS_FILE)
        if filesystem.isfile(path):
            lines = read_text(path, "labels, one a line").splitlines()
            return [line.strip() for line in lines if line.strip()]
        if self.is_hf:
            id2label = self.hf_values.get("id2label") or {}
            labels = [id2label[key] for key in sorted(id2label, key=int)]
            if labels and labels != [f"LABEL_{i}" for i in range(len(labels))]:
                return labels
        return None

    def do_lower_case(
        self, given: bool | None = None, flag: str = "", vocab_file: str | None = None
    ) -> bool:
        """Whether the model lower-cases its text, by `text.casing`'s rule on its evidence: its
        files (task_model.json, tokenizer_config.json), its name, its vocab (`vocab_file`, the
        one its text is tokenized with, else its own), then `given` (the flag; None: ask)."""
        tokenizer = os.path.join(self.directory, hf_format.TOKENIZER_CONFIG_FILE)
        name = checkpoint_model_name(self.path) or os.path.basename(self.directory.rstrip("/"))
        if self.description is not None:
            said, why = self.description["do_lower_case"], f"its {TASK_MODEL_FILE} says"
        elif filesystem.isfile(tokenizer):
            values = hf_format.read_hf_values(self.directory, hf_format.TOKENIZER_CONFIG_FILE)
            said, why = values.get("do_lower_case"), f"its {hf_format.TOKENIZER_CONFIG_FILE} says"
        else:
            said = released_model_do_lower_case(name)
            why = f"`{name}` is a {'lower-cased' if said else 'cased'} model, so"
        where = f"{flag}={self.path}" if flag else self.path
        vocab = vocab_file or self.vocab_file
        return decide_do_lower_case(given, where, said, why, vocab)

    def with_attention(self, config: BertConfig) -> BertConfig:
        """`config`, made causal when these weights were pre-trained left to right (their
        directory's config says so): the attention direction belongs to the weights,
        whichever bert_config.json gives the shape."""
        if config.causal_attention or _config_file(self.directory) is None:
            return config
        if self.config.causal_attention:
            logger.info("%s: pre-trained left to right, so causal attention", self.directory)
            config = config.replace(causal_attention=True)
        return config

    def saved_class(self, base: type) -> tuple[type | None, str, list[int]]:
        """The model class the files name (a subclass of `base`'s family root), the file that
        says so, and the shape of its head's `output_weights` there ([num_labels, H]; []
        where not read); (None, "", []) where they name none (the encoder alone). Raises
        `InputError` where task_model.json names a class that is not one of the family."""
        root = root_class(base)  # found once per family: a load asks it up to three times
        if root not in self._saved_classes:
            self._saved_classes[root] = self._saved_class(model_classes(root))
        return self._saved_classes[root]

    def _saved_class(self, family: list[type]) -> tuple[type | None, str, list[int]]:
        if self.description is not None:
            name = self.description["class_name"]
            said = os.path.join(self.directory, TASK_MODEL_FILE)
            found = next((c for c in family if c.__name__ == name), None)
            if found is None:
                raise InputError(
                    f"{said}: describes a {name!r}, not one of bert_tf's models (expected "
                    f"{', '.join(sorted(c.__name__ for c in family if c.hf_architecture))})"
                )
            return found, said, []
        if self.is_hf:
            return self._hf_class(family)
        if self.reader.has_tensor(checkpoints.OBJECT_GRAPH):  # run_pretraining.py's (a
            pretrainer = next(c for c in family if c.__name__ == "BertPretrainer")  # fine-
            return pretrainer, self.weights, []  # tuning run's has a task_model.json)
        shapes = self.reader.get_variable_to_shape_map()
        found = [c for c in family if c.original_head in shapes]
        # The original's heads first: a top-level output_weights is its run_classifier's.
        found.sort(key=lambda c: c.original_head is None)
        if not found:
            return None, "", []
        return found[0], self.weights, list(shapes.get(found[0].original_head, []))

    def _hf_class(self, family: list[type]) -> tuple[type | None, str, list[int]]:
        shapes = self.hf_weights.shapes
        shapes = shapes | {name.removeprefix("bert."): shape for name, shape in shapes.items()}
        archs = self.hf_values.get("architectures") or []
        found = [c for c in family if c.hf_architecture and c.hf_architecture in archs]
        said = os.path.join(self.directory, hf_format.CONFIG_FILE) if found else self.weights
        if not found:  # by its head's names; the same names with a pooler or without
            pooler = "pooler.dense.weight" in shapes  # (a sequence or a token classifier)
            found = [c for c in family if set(_head_hf_names(c)) & set(shapes)]
            found.sort(key=lambda c: (c.hf_pooler != pooler, c.original_head is None))
        if not found:
            return None, "", []
        head = next((n for n in _head_hf_names(found[0]) if n.endswith(".weight")), "")
        return found[0], said, list(shapes.get(head, []))


def model_do_lower_case(
    source: ModelSource | None, given: bool | None, vocab_file: str, flag: str = "--init_checkpoint"
) -> bool:
    """The casing to tokenize text for the model `source` with, by `vocab_file` (the scripts'
    --vocab_file): `ModelSource.do_lower_case`, or with no model (a run from random weights)
    the same rule on the vocab and the flag `given` alone."""
    if source is not None:
        return source.do_lower_case(given, flag, vocab_file)
    return decide_do_lower_case(given, vocab_file=vocab_file)


def _head_hf_names(cls: type) -> list[str]:
    return [hf for original, hf in cls.hf_names.items() if not original.startswith("bert/")]


def write_task_model_files(
    output_dir: str, model: keras.Model, vocab_file: str, do_lower_case: bool, task: str = ""
) -> None:
    """Writes bert_config.json, vocab.txt and `TASK_MODEL_FILE` (with the `task` fine-tuned,
    e.g. "MRPC") into `output_dir`: what `ModelSource.description` reads back."""
    model.config.to_json_file(os.path.join(output_dir, "bert_config.json"))
    with (
        filesystem.open_file(vocab_file, "rb") as source,
        atomic_open(os.path.join(output_dir, "vocab.txt"), "wb") as target,
    ):
        target.write(source.read())
    description = {"model": keras.saving.serialize_keras_object(model)}
    description |= {"do_lower_case": do_lower_case} | ({"task": task} if task else {})
    atomic_write_text(
        os.path.join(output_dir, TASK_MODEL_FILE), json.dumps(description, indent=2) + "\n"
    )
