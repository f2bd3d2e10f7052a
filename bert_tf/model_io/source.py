"""A model's files, resolved once: `ModelSource(path)` is the one reader of a model directory
(or a checkpoint in one). Opening a path gives the loader of its format, found once, as
`pathlib.Path` gives a `PosixPath`: `OriginalFiles` (the original's TF1 layout: a released
model, run_pretraining.py's `pretrained/`, a converted one), `TrainingFiles` (a training
output_dir's `ckpt-<step>`, by Keras paths) or `HfFiles` (Hugging Face's). Each answers config,
vocab, casing, labels, task, class and tensors itself; this module holds what they share.
Every user is handed the one object: the fine-tuning driver (its output_dir's checks too), the
trainer's initialization, NER's labels, the converter, extract_features.py, fill_mask.py and
`from_pretrained`. As keras-hub's `get_preset_loader` and `check_config_class`, the class is
found among the subclasses of the one the caller hands in: this package imports no model class.

    source = ModelSource("output/mrpc")                 # a TrainingFiles
    source.config, source.labels, source.do_lower_case(), source.task   # BertConfig, [...], ...
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
from collections.abc import Callable

import numpy as np

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import read_text
from bert_tf.model_io import checkpoints, task_model
from bert_tf.model_io.hf_format import TOKENIZER_CONFIG_FILE, read_hf_values
from bert_tf.model_io.task_model import TASK_MODEL_FILE
from bert_tf.text.casing import decide_do_lower_case
from bert_tf.tokenization import checkpoint_model_name, released_model_do_lower_case

logger = logging.getLogger(__name__)

# The label of each output of a classifier or tagger, one a line (NER reads it back).
LABELS_FILE = "labels.txt"
# The config files of a model directory, in the order they are looked for (the original's).
CONFIG_FILES = ("bert_config.json", "config.json")


def model_directory(path: str | os.PathLike) -> str:
    """`path`, or the folder of the checkpoint prefix it is (`OUT/ckpt-300`: OUT); a kept
    copy's (`OUT/kept/ckpt-8000`) is its run's."""
    directory = filesystem.folder_of(os.fspath(path)).rstrip("/") or "/"
    if os.path.basename(directory) == checkpoints.KEPT_CHECKPOINTS_DIR:
        return os.path.dirname(directory)
    return directory


def config_file(directory: str) -> str | None:
    """The first of `CONFIG_FILES` in `directory`; None without one."""
    paths = (os.path.join(directory, name) for name in CONFIG_FILES)
    return next((path for path in paths if filesystem.isfile(path)), None)


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


def class_of(family: list[type], architecture: str) -> type:
    """The class of `family` Hugging Face calls `architecture` (each model class's name in
    the one format that names classes): "BertModel" is the encoder alone."""
    return next(c for c in family if c.hf_architecture == architecture)


@dataclasses.dataclass
class Tensors:
    """A checkpoint's tensors under the model's names: shapes, and how to read one."""

    source: str
    shapes: dict[str, list[int]]
    read: Callable[[str], np.ndarray]
    optional: tuple[str, ...] = ()  # may be missing: they keep their initial values
    skipped: list[str] = dataclasses.field(default_factory=list)
    # The checkpoint's own name of each, for messages (Hugging Face's), where not the original.
    own_names: dict[str, str] = dataclasses.field(default_factory=dict)

    def named(self, names) -> list[str]:
        return [self.own_names.get(name, name) for name in names]


class ModelSource:
    """The files of the model directory (or checkpoint) `path`, each read when first asked for,
    and once. Its weights are looked for then too: a folder with only a vocab.txt and a
    config is a source of casing (`BertPreprocessor`); `weights` raises `InputError` there.
    `ModelSource(path)` is an instance of the loader of the path's format, the first whose
    `claims` says so."""

    # The loaders of the formats, each asked in turn whether a path is of its format: the
    # last defined first (a subclass before its base; `formats` defines them, imported with
    # this package).
    _loaders: list[type[ModelSource]] = []

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        ModelSource._loaders.insert(0, cls)

    @classmethod
    def claims(cls, path: str) -> bool:
        """Whether `path` is of this loader's format."""
        raise NotImplementedError

    def __new__(cls, path: str | os.PathLike) -> ModelSource:
        if cls is ModelSource:
            cls = next(loader for loader in ModelSource._loaders if loader.claims(os.fspath(path)))
        return super().__new__(cls)

    # Which format the converter writes this one in: Hugging Face's, but for Hugging Face's.
    converts_to_original = False

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = os.fspath(path)
        self.directory = model_directory(self.path)
        self._saved_classes: dict[type, type] = {}  # `saved_class`'s, by family

    # What each format answers itself.
    def tensors(self, model) -> Tensors:
        """The weights under `model`'s names (`load_checkpoint` assigns them)."""
        raise NotImplementedError

    def _saved_class(self, family: list[type]) -> tuple[type, str, list[int]]:
        raise NotImplementedError

    @functools.cached_property
    def weights(self) -> str:
        """The checkpoint `path` means, by one rule for every kind: a checkpoint prefix (or one
        of its files) is that checkpoint (`OUT/ckpt-2` is step 2); a training output_dir its
        latest checkpoint by its state file; a released model's folder (or `pretrained/`) its
        bert_model.ckpt (`HfFiles`: its folder). Raises `InputError` for none."""
        path = self.path
        if checkpoints.checkpoint_prefix(path) is None and filesystem.isdir(path):
            if config_file(path) is None and checkpoints.latest_checkpoint(path) is None:
                names = " or ".join(CONFIG_FILES)
                raise InputError(
                    f"{path}: no {names} and no checkpoint; expected a model directory"
                )
        return checkpoints.resolve_checkpoint_path(path)

    @functools.cached_property
    def description(self) -> dict | None:
        """task_model.json's (`task_model.read_description`); None without one."""
        return task_model.read_description(self.directory)

    @property
    def task(self) -> str:
        """The task fine-tuned here ("" where none is recorded)."""
        return (self.description or {}).get("task", "")

    @functools.cached_property
    def config(self) -> BertConfig:
        """The directory's `BertConfig` (the first of `CONFIG_FILES`, read as its format)."""
        found = config_file(self.directory)
        if found is None:
            raise InputError(
                f"{self.directory}: no {' or '.join(CONFIG_FILES)} in this model directory; "
                "pass config=BertConfig.from_json_file(...) (the config it was trained with)"
            )
        return BertConfig.from_json_file(found)

    @functools.cached_property
    def vocab_file(self) -> str | None:
        own = os.path.join(self.directory, "vocab.txt")
        return own if filesystem.isfile(own) else None

    @functools.cached_property
    def labels(self) -> list[str] | None:
        """labels.txt's labels; None without."""
        path = os.path.join(self.directory, LABELS_FILE)
        if not filesystem.isfile(path):
            return None
        lines = read_text(path, "labels, one a line").splitlines()
        return [line.strip() for line in lines if line.strip()]

    def casing_evidence(self) -> tuple[bool | None, str]:
        """What the files say of casing, and why: task_model.json, then tokenizer_config.json
        (every directory `saving.save_model_directory` writes has one), then the name."""
        if self.description is not None:
            return self.description["do_lower_case"], f"its {TASK_MODEL_FILE} says"
        tokenizer = os.path.join(self.directory, TOKENIZER_CONFIG_FILE)
        if filesystem.isfile(tokenizer):
            values = read_hf_values(self.directory, TOKENIZER_CONFIG_FILE)
            return values.get("do_lower_case"), f"its {TOKENIZER_CONFIG_FILE} says"
        name = checkpoint_model_name(self.path) or os.path.basename(self.directory.rstrip("/"))
        said = released_model_do_lower_case(name)
        return said, f"`{name}` is a {'lower-cased' if said else 'cased'} model, so"

    def do_lower_case(
        self, given: bool | None = None, flag: str = "", vocab_file: str | None = None
    ) -> bool:
        """Whether the model lower-cases its text, by `text.casing`'s rule on its evidence: its
        files, its name, its vocab (`vocab_file`, the one its text is tokenized with, else its
        own), then `given` (the flag; None: ask)."""
        said, why = self.casing_evidence()
        where = f"{flag}={self.path}" if flag else self.path
        return decide_do_lower_case(given, where, said, why, vocab_file or self.vocab_file)

    def with_attention(self, config: BertConfig) -> BertConfig:
        """`config`, made causal when these weights were pre-trained left to right (their
        directory's config says so): the attention direction belongs to the weights,
        whichever bert_config.json gives the shape."""
        if config.causal_attention or config_file(self.directory) is None:
            return config
        if self.config.causal_attention:
            logger.info("%s: pre-trained left to right, so causal attention", self.directory)
            config = config.replace(causal_attention=True)
        return config

    def saved_class(self, base: type) -> tuple[type, str, list[int]]:
        """The model class the files name (of `base`'s family; the encoder, `BertModel`'s,
        where they name no head), the file that says so ("" for none), and the shape of its
        head's `output_weights` there ([num_labels, H]; [] where not read). Raises
        `InputError` where task_model.json names a class that is not one of the family."""
        root = root_class(base)  # found once per family: a load asks it up to three times
        if root not in self._saved_classes:
            family = model_classes(root)
            found = task_model.described_class(self.description, self.directory, family)
            self._saved_classes[root] = found or self._saved_class(family)
        return self._saved_classes[root]

    def head_mismatch(self, model, labels: list[str] | None) -> str:
        """Why the task head these files hold is not `model`'s to take ("" where it is, or
        where they hold none): another class (a NER model's, for a classifier: both heads live
        under the same names), other settings (3 labels, or a feature-based tagger's BiLSTM),
        or other labels (RTE's from MRPC's). A head for the same labels carries over: AX is
        MNLI's."""
        saved, said, _ = self.saved_class(type(model))
        if saved.head_scope is None:
            return ""
        if saved is not type(model):
            return f"holds a {saved.__name__} ({said})"
        differ = task_model.differences(self.description, model)
        if differ:
            return f"holds a {saved.__name__} with {', '.join(differ)} ({said})"
        if labels and self.labels and self.labels != labels:
            task = f" fine-tuned on {self.task}" if self.task else ""
            return (
                f"holds a {saved.__name__}{task} for the labels {' '.join(self.labels)}, not "
                f"{' '.join(labels)}"
            )
        return ""

    # A fine-tuning output_dir, checked before a rerun resumes, evaluates or predicts there: the
    # same variables computing something else would restore silently.
    @functools.cached_property
    def _trained(self) -> bool:
        """Whether a training checkpoint is there (listed once, for every check)."""
        return bool(checkpoints.training_checkpoints(self.directory))

    def _fine_tuned(self) -> dict | None:
        """task_model.json's description, once a checkpoint is there; None before."""
        return self.description if self._trained else None

    def check_task(self, task: str) -> None:
        """Raises `InputError` when this output_dir holds a model fine-tuned on another task,
        which the run would resume (or evaluate) as its own, overwriting its results."""
        found = self._fine_tuned()
        if found and found["task"] and found["task"] != task:
            raise InputError(
                f"--output_dir={self.path}: holds a {found['class_name']} fine-tuned on "
                f"{found['task']}, not on {task}; give each task an --output_dir of its own"
            )

    def trained_config(self, config: BertConfig, config_file: str) -> BertConfig:
        """The config to resume or predict from this output_dir with: its own bert_config.json
        once it holds a checkpoint (else `config`, read from `config_file`). The attention
        direction belongs to the weights (a `config_file` of the shape alone leaves a
        left-to-right model causal); any other key set otherwise is an `InputError`."""
        own = os.path.join(self.directory, "bert_config.json")
        if not (self._trained and filesystem.isfile(own)):
            return config
        trained, given = BertConfig.from_json_file(own), config.to_dict()
        for key, value in trained.to_dict().items():
            if key != "causal_attention" and given.get(key) != value:
                raise InputError(
                    f"--bert_config_file={config_file}: {key}={given.get(key)!r}, but "
                    f"--output_dir={self.path} was fine-tuned with {key}={value!r} (its "
                    "bert_config.json); give that config, or another --output_dir"
                )
        if trained.causal_attention and not config.causal_attention:
            logger.info("%s: fine-tuned left to right, so causal attention", own)
        return trained

    def check_same_model(self, model, do_lower_case: bool, vocab_file: str) -> None:
        """Raises `InputError` when this output_dir holds a checkpoint of a task model other
        than the run's: another class, other settings (the feature-based layers), another
        casing or another vocab; the rerun would also write its task_model.json over the one
        that says so."""
        found = self._fine_tuned()
        if found is None:
            return
        mismatches = task_model.differences(found, model)
        if found["do_lower_case"] != do_lower_case:
            mismatches.append(f"do_lower_case={found['do_lower_case']}, not {do_lower_case}")
        if self.vocab_file and _read_bytes(self.vocab_file) != _read_bytes(vocab_file):
            mismatches.append(f"its vocab.txt, not --vocab_file={vocab_file}")
        if mismatches:
            raise InputError(
                f"--output_dir={self.path}: its checkpoint is of {', '.join(mismatches)} as "
                "this run's options build (its task_model.json); rerun with the options it was "
                "trained with, or give another --output_dir"
            )


def _read_bytes(path: str) -> bytes:
    with filesystem.open_file(path, "rb") as f:
        return f.read()


def model_do_lower_case(
    source: ModelSource | None, given: bool | None, vocab_file: str, flag: str = "--init_checkpoint"
) -> bool:
    """The casing to tokenize text for the model `source` with, by `vocab_file` (the scripts'
    --vocab_file): `ModelSource.do_lower_case`, or with no model (a run from random weights)
    the same rule on the vocab and the flag `given` alone."""
    if source is not None:
        return source.do_lower_case(given, flag, vocab_file)
    return decide_do_lower_case(given, vocab_file=vocab_file)
