"""Models loaded in one line from a model directory: the one loader of every kind that
`bert_tf.model_dir` describes. As keras-hub's `Backbone.from_preset`, it is handed the class to
build (`BertClassifier.from_pretrained(path)` passes `BertClassifier`) and imports no model
class: the class a directory's files name is found among Keras's registered names, and must be
a subclass of the one asked for.

    encoder = BertEncoder.from_pretrained("uncased_L-12_H-768_A-12")
    source = load_model_directory("output/mrpc")   # the class its task_model.json names
"""

from __future__ import annotations

import dataclasses
import logging
import os

import keras

from bert_tf import checkpoints, filesystem, hf_format
from bert_tf.config import BertConfig
from bert_tf.errors import InputError, first_line
from bert_tf.loading import LoadReport, load_checkpoint
from bert_tf.model_dir import (
    TASK_MODEL_FILE,
    model_directory,
    read_config,
    read_do_lower_case,
    read_labels,
    task_model_description,
    weights_path,
)

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class ModelDirectory:
    """A model loaded from a model directory, with what goes beside its weights."""

    model: keras.Model
    vocab_file: str | None
    do_lower_case: bool
    labels: list[str] | None = None
    report: LoadReport | None = None  # what was loaded, by the checkpoint's names


def require_file(directory: str, name: str) -> str:
    path = os.path.join(directory, name)
    if not filesystem.isfile(path):
        raise InputError(f"{directory}: no {name} (expected a BERT model directory)")
    return path


def registered(name: str) -> type | None:
    """The bert_tf model class registered with Keras under `name` (bert_tf.modeling registers
    them all when imported)."""
    return keras.saving.get_registered_object(f"bert_tf>{name}")


def load_model_directory(
    path: str | os.PathLike,
    model_class: type | None = None,
    config: BertConfig | None = None,
    do_lower_case: bool | None = None,
    vocab_file: str | None = None,
    require_heads: bool = False,
    encoder_only: bool = False,
    **model_args,
) -> ModelDirectory:
    """The model of the model directory (or checkpoint) `path`, with its vocab, casing and
    labels. The weights: those `model_dir.weights_path` says `path` means. The class:
    `model_class` where given, built with `model_args` (a fine-tuned output_dir of that class
    gives its own head arguments when none are passed); else the one the files name
    (task_model.json, a Hugging Face config's `architectures`, the heads in the checkpoint),
    which must be a subclass of `model_class`. `config`: instead of the directory's. The
    casing: `model_dir.read_do_lower_case`'s rule, `do_lower_case` its flag.

    The encoder must be whole; a head the checkpoint lacks is newly initialized (a warning;
    an error with `require_heads`, or for the fine-tuned model a task_model.json describes).
    A head of another task's class is an error, unless `encoder_only`: then only the encoder
    is loaded (a classifier fine-tuned from a NER model's encoder, say).

    Raises:
        InputError: no config or checkpoint there, a class the files name that is not one
            of ours, a head of another class, or weights that do not fit the model.
    """
    weights = weights_path(path)
    directory = model_directory(weights)
    base = model_class or registered("ConfigModel")
    if base is None:
        raise InputError("no bert_tf model class is registered: import bert_tf.modeling first")
    description = task_model_description(directory)
    saved, said = saved_class(
        directory, weights, base if model_class is None else None, description
    )
    if model_class is not None and saved is not None and not encoder_only:
        _check_head_class(directory, model_class, saved, said)
    cls = model_class or saved or registered("BertEncoder")
    own = description is not None and cls is saved and not (config or model_args)
    try:
        if own:
            model = cls.from_config(description["config"])
        else:
            config = config or read_config(directory)
            if not model_args and cls is saved and not description:
                model_args = cls.head_arguments(_head_shape(directory, weights, cls))
            model = cls(config, **model_args)
    except (TypeError, ValueError, KeyError) as e:
        where = f"{os.path.join(directory, TASK_MODEL_FILE)}: " if own else ""
        raise InputError(f"{where}cannot build a {cls.__name__} ({first_line(e)})") from None
    report = load_checkpoint(model, weights, encoder_only)
    _check_heads(model, report, require_heads or (own and not encoder_only))
    casing = read_do_lower_case(directory, do_lower_case)
    own_vocab = os.path.join(directory, "vocab.txt")
    vocab_file = own_vocab if filesystem.isfile(own_vocab) else vocab_file
    return ModelDirectory(model, vocab_file, casing, read_labels(directory), report)


def saved_class(
    directory: str, weights: str, base: type | None, description: dict | None = None
) -> tuple[type | None, str]:
    """The model class that `directory`'s files name for `weights`, and which file says so;
    (None, "") where they name none (a checkpoint of the encoder alone). `base`: where no class
    was asked for, the class the found one must derive from. `description`: the directory's
    task_model.json, where the caller has read it.

    Raises:
        InputError: task_model.json names a class that is not a registered bert_tf model.
    """
    description = description or task_model_description(directory)
    if description is not None:
        name, said = description["class_name"], os.path.join(directory, TASK_MODEL_FILE)
        found = registered(name)
        root = base or registered("ConfigModel")
        if not (isinstance(found, type) and issubclass(found, root)):
            raise InputError(
                f"{said}: describes a {name!r}, not one of bert_tf's models (expected "
                f"{', '.join(sorted(c.__name__ for c in _classes(root)))})"
            )
        return found, said
    if hf_format.is_hf_directory(weights):
        archs = hf_format.read_hf_values(directory).get("architectures") or []
        by_arch = [c for c in _classes(base) if c.hf_architecture in archs]
        if by_arch:
            return by_arch[0], os.path.join(directory, hf_format.CONFIG_FILE)
        names = set(hf_format.HfWeights(directory).shapes)
        names |= {name.removeprefix("bert.") for name in names}
        by_names = [c for c in _classes(base) if set(_head_hf_names(c)) & names]
    else:
        prefix = checkpoints.resolve_checkpoint_path(weights)
        if checkpoints.is_object_based(prefix):  # run_pretraining.py's (a fine-tuning run's
            return registered("BertPretrainer"), prefix  # has a task_model.json)
        names = set(checkpoints.checkpoint_reader(prefix).get_variable_to_shape_map())
        by_names = [c for c in _classes(base) if c.original_head in names]
    # The original's heads first: a top-level output_weights is its run_classifier's.
    by_names.sort(key=lambda c: c.original_head is None)
    return (by_names[0], weights) if by_names else (None, "")


def _classes(base: type | None) -> list[type]:
    """The registered bert_tf model classes that derive from `base` (every one: None)."""
    root = base or registered("ConfigModel")
    objects = keras.saving.get_custom_objects().items()
    return [
        c for key, c in objects
        if key.startswith("bert_tf>") and isinstance(c, type) and issubclass(c, root)
    ]  # fmt: skip


def _head_hf_names(cls: type) -> list[str]:
    return [hf for original, hf in cls.hf_names.items() if not original.startswith("bert/")]


def _head_shape(directory: str, weights: str, cls: type) -> list[int]:
    """The shape of `cls`'s head `output_weights` in `weights` ([num_labels, H])."""
    if hf_format.is_hf_directory(weights):
        shapes = hf_format.HfWeights(directory).shapes
        name = next((n for n in _head_hf_names(cls) if n.endswith(".weight")), "")
        return shapes.get(name) or shapes.get(f"bert.{name}") or []
    reader = checkpoints.checkpoint_reader(checkpoints.resolve_checkpoint_path(weights))
    return reader.get_variable_to_shape_map().get(cls.original_head or "", [])


def _check_head_class(directory: str, asked: type, saved: type, said: str) -> None:
    """Raises `InputError` when the directory holds a task model of a class other than the
    one asked for: both heads live under the same names, and the other task's would load."""
    if saved.head_scope is None or asked.head_scope is None or issubclass(saved, asked):
        return
    raise InputError(
        f"{directory}: holds a {saved.__name__} ({said}), not a {asked.__name__}: its head is "
        f"another task's; to fine-tune a new {asked.__name__} head on its encoder, pass "
        "encoder_only=True"
    )


def _check_heads(model: keras.Model, report: LoadReport, required: bool) -> None:
    """Says (or, `required`, raises `InputError`) that the checkpoint gave `model`'s heads no
    weights."""
    heads = model.head_variables()
    if not heads or report.head_loaded:
        return
    what = ", ".join(sorted({variable.path.split("/")[0] for variable in heads}))
    if required:
        raise InputError(
            f"{report.source}: has no weights for the {type(model).__name__}'s head "
            f"({what}); expected the checkpoint of a model with that head"
        )
    logger.warning(
        "%s: the checkpoint %s has no weights for its head (%s), newly initialized: train it "
        "before use",
        type(model).__name__,
        report.source,
        what,
    )
