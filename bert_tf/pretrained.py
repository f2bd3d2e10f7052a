"""Model directories: what their files say (config, casing, labels, task model), and the model
loaded from them in one line. One is a released model or `pretrained/` (bert_config.json,
bert_model.ckpt, vocab.txt), a training output_dir (bert_config.json beside `ckpt-<step>`; a
fine-tuning one also task_model.json, vocab.txt), or a Hugging Face one (config.json,
model.safetensors, vocab.txt, tokenizer_config.json). As keras-hub's `Backbone.from_preset`,
the loader is handed the class to build and imports none: the class a directory's files name
is found among Keras's registered names, a subclass of the one asked for.

    encoder = BertEncoder.from_pretrained("uncased_L-12_H-768_A-12")
    source = load_model_directory("output/mrpc")   # the class its task_model.json names
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os

import keras

from bert_tf import checkpoints, filesystem, hf_format
from bert_tf.checkpoints import KEPT_CHECKPOINTS_DIR, checkpoint_prefix, resolve_checkpoint_path
from bert_tf.config import BertConfig
from bert_tf.errors import InputError, first_line
from bert_tf.fileio import atomic_open, atomic_write_text, read_text
from bert_tf.loading import LoadReport, load_checkpoint
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
    if os.path.basename(directory) == KEPT_CHECKPOINTS_DIR:
        return os.path.dirname(directory)
    return directory


def weights_path(path: str | os.PathLike) -> str:
    """The weights `path` means, by one rule for every kind: a checkpoint prefix (or one of its
    files) is that checkpoint (`OUT/ckpt-2` is step 2); a Hugging Face directory its
    safetensors; a training output_dir its latest checkpoint by its state file; a released
    model's folder (or `pretrained/`, run_pretraining.py's export at its end) its
    bert_model.ckpt. Raises `InputError` for none of these."""
    path = os.fspath(path)
    if checkpoint_prefix(path) is None and filesystem.isdir(path):
        if hf_format.is_hf_directory(path):
            return path
        if config_file(path) is None:
            names = " or ".join(CONFIG_FILES)
            raise InputError(f"{path}: no {names} and no checkpoint; expected a model directory")
    return resolve_checkpoint_path(path)


def config_file(directory: str) -> str | None:
    """The first of `CONFIG_FILES` in `directory`; None without one."""
    paths = (os.path.join(directory, name) for name in CONFIG_FILES)
    return next((path for path in paths if filesystem.isfile(path)), None)


def read_config(path: str | os.PathLike) -> BertConfig:
    """The `BertConfig` of the model directory `path` (see `CONFIG_FILES`). Raises
    `InputError` without one, or for a Hugging Face config of another model type."""
    directory = model_directory(path)
    found = config_file(directory)
    if found is None:
        raise InputError(
            f"{directory}: no {' or '.join(CONFIG_FILES)} in this model directory; pass "
            "config=BertConfig.from_json_file(...) (the config the checkpoint was trained with)"
        )
    if os.path.basename(found) == hf_format.CONFIG_FILE:  # Hugging Face's names and activations
        return hf_format.read_hf_config(directory)
    return BertConfig.from_json_file(found)


def read_do_lower_case(path: str | os.PathLike, given: bool | None = None, flag: str = "") -> bool:
    """Whether the model of `path` lower-cases its text, by one rule: its own files
    (task_model.json, Hugging Face's tokenizer_config.json), else its name as the original's
    `validate_case_matches_checkpoint` reads it, else `given` (a casing flag; None: ask the
    model), else True (logged: the released English models are mostly uncased). Raises
    `InputError` where `given` contradicts the files or name (`flag`: the option of `path`)."""
    directory = model_directory(path)
    description = task_model_description(directory)
    tokenizer = os.path.join(directory, hf_format.TOKENIZER_CONFIG_FILE)
    name = checkpoint_model_name(path) or os.path.basename(directory.rstrip("/"))
    if description is not None:
        said, why = description["do_lower_case"], f"its {TASK_MODEL_FILE} says"
    elif filesystem.isfile(tokenizer):
        values = hf_format.read_hf_values(directory, hf_format.TOKENIZER_CONFIG_FILE)
        said, why = values.get("do_lower_case"), f"its {hf_format.TOKENIZER_CONFIG_FILE} says"
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


def adopt_checkpoint_attention(config: BertConfig, checkpoint: str | os.PathLike) -> BertConfig:
    """`config`, made causal when `checkpoint` was pre-trained left to right (its model
    directory's config says so: run_pretraining.py writes one beside its checkpoints and in
    pretrained/, Hugging Face's says `is_decoder`): the attention direction belongs to the
    weights, whichever bert_config.json gives the shape."""
    directory = model_directory(checkpoint)
    if config.causal_attention or config_file(directory) is None:
        return config
    if read_config(directory).causal_attention:
        logger.info("%s: pre-trained left to right, so causal attention", directory)
        config = config.replace(causal_attention=True)
    return config


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
    description = {"model": keras.saving.serialize_keras_object(model)}
    description |= {"do_lower_case": do_lower_case} | ({"task": task} if task else {})
    atomic_write_text(
        os.path.join(output_dir, TASK_MODEL_FILE), json.dumps(description, indent=2) + "\n"
    )


def task_model_description(directory: str) -> dict | None:
    """`directory`'s `TASK_MODEL_FILE` (the one reader of `write_task_model_files`'s), checked:
    `class_name`, `config` (the model's Keras description), `do_lower_case`, `task` ("" where
    not recorded); None without one. Raises `InputError` for a file that is not one."""
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
        lines = read_text(path, "labels, one a line").splitlines()
        return [line.strip() for line in lines if line.strip()]
    if hf_format.is_hf_directory(directory):
        id2label = hf_format.read_hf_values(directory).get("id2label") or {}
        labels = [id2label[key] for key in sorted(id2label, key=int)]
        if labels and labels != [f"LABEL_{i}" for i in range(len(labels))]:
            return labels
    return None


@dataclasses.dataclass
class ModelDirectory:
    """A model loaded from a model directory, with what goes beside its weights."""

    model: keras.Model
    vocab_file: str | None
    do_lower_case: bool
    labels: list[str] | None = None
    report: LoadReport | None = None  # what was loaded, by the checkpoint's names


def registered(name: str) -> type | None:
    """The bert_tf model class Keras has under `name` (bert_tf.modeling registers them)."""
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
    labels; the weights `weights_path` says `path` means. The class: `model_class`,
    built with `model_args` (or the head arguments of a fine-tuned output_dir of that class);
    else the one the files name (task_model.json, a Hugging Face `architectures`, the heads in
    the checkpoint), a subclass of `model_class`. `config`: instead of the directory's. The
    casing: `read_do_lower_case`, `do_lower_case` its flag.

    A head the checkpoint lacks is newly initialized (a warning; an error with
    `require_heads` or for a task_model.json's model). A head of another task's class is an
    error, unless `encoder_only` (a classifier fine-tuned from a NER model's encoder, say).
    Raises `InputError` for no config or checkpoint there, a class the files name that is not
    one of ours, a head of another class, or weights that do not fit the model."""
    weights = weights_path(path)
    directory = model_directory(weights)
    base = model_class or registered("ConfigModel")
    if base is None:
        raise InputError("no bert_tf model class is registered: import bert_tf.modeling first")
    description = task_model_description(directory)
    saved, said, head_shape = saved_class(
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
                model_args = cls.head_arguments(head_shape)
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
) -> tuple[type | None, str, list[int]]:
    """The model class that `directory`'s files name for `weights`, the file that says so, and
    the shape of its head's `output_weights` in them ([num_labels, H]; [] where not read);
    (None, "", []) where they name none (the encoder alone). `base`: the class the found one
    must derive from. `description`: the directory's task_model.json, where already read.
    Raises `InputError` where task_model.json names no registered bert_tf model class."""
    description = description or task_model_description(directory)
    if description is not None:
        name, said = description["class_name"], os.path.join(directory, TASK_MODEL_FILE)
        found, root = registered(name), base or registered("ConfigModel")
        if not (isinstance(found, type) and issubclass(found, root)):
            raise InputError(
                f"{said}: describes a {name!r}, not one of bert_tf's models (expected "
                f"{', '.join(sorted(c.__name__ for c in _classes(root)))})"
            )
        return found, said, []
    if hf_format.is_hf_directory(weights):
        shapes = hf_format.HfWeights(directory).shapes
        shapes |= {name.removeprefix("bert."): shape for name, shape in shapes.items()}
        archs = hf_format.read_hf_values(directory).get("architectures") or []
        found = [c for c in _classes(base) if c.hf_architecture in archs]
        said = os.path.join(directory, hf_format.CONFIG_FILE) if found else weights
        found = found or [c for c in _classes(base) if set(_head_hf_names(c)) & set(shapes)]

        def head(cls: type) -> str:
            return next((n for n in _head_hf_names(cls) if n.endswith(".weight")), "")
    else:
        prefix = checkpoints.resolve_checkpoint_path(weights)
        reader = checkpoints.checkpoint_reader(prefix)
        if reader.has_tensor(checkpoints.OBJECT_GRAPH):  # run_pretraining.py's (a fine-tuning
            return registered("BertPretrainer"), prefix, []  # run's has a task_model.json)
        shapes, said = reader.get_variable_to_shape_map(), weights
        found = [c for c in _classes(base) if c.original_head in shapes]

        def head(cls: type) -> str:
            return cls.original_head or ""

    # The original's heads first: a top-level output_weights is its run_classifier's.
    found.sort(key=lambda c: c.original_head is None)
    return (found[0], said, list(shapes.get(head(found[0]), []))) if found else (None, "", [])


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
        "before use", type(model).__name__, report.source, what,
    )  # fmt: skip
