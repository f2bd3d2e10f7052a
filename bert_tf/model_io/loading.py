"""Loading a model's weights from any kind of checkpoint, by one rule for all: the original's
names, a bert_tf training checkpoint (by each variable's Keras path), a Hugging Face directory.
The model says its own names (`model.original_variable_names()`, `hf_names`); a variable the
original has no name for (a BiLSTM head) goes by its Keras path. Every variable of the model is
loaded or named: in the report, and in a log line. This module knows no model class.

    report = load_checkpoint(BertEncoder(config), "uncased_L-12_H-768_A-12/bert_model.ckpt")
    loaded = load_model_directory("output/mrpc", ConfigModel)   # the class its files name
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re

import keras
import numpy as np

from bert_tf.config import BertConfig
from bert_tf.errors import InputError, first_line
from bert_tf.model_io.checkpoints import UNREADABLE_CHECKPOINT, listing, variable_names
from bert_tf.model_io.source import ModelSource, Tensors, root_class
from bert_tf.model_io.task_model import TASK_MODEL_FILE

logger = logging.getLogger(__name__)

_LAYER = re.compile(r"bert/encoder/layer_(\d+)/")


@dataclasses.dataclass
class LoadReport:
    """What `load_checkpoint` did, by name (`checkpoints.variable_names`): every variable of
    the model is in `loaded` or `missing`."""

    loaded: list[str]
    missing: list[str]  # in the model, not loaded (left at their initial values)
    unexpected: list[str]  # in the checkpoint, not in the model (not loaded)
    skipped: list[str]  # training state: optimizer slots, global_step
    source: str = ""  # the checkpoint read (the directory for Hugging Face's)
    head_loaded: bool = False  # whether a head took values from it


def load_checkpoint(
    model: keras.Model, checkpoint: str | os.PathLike | ModelSource, encoder_only: bool = False
) -> LoadReport:
    """Loads `model` (an encoder, a pre-trainer or a task model) from `checkpoint`: an original
    prefix (or one of its files, or its folder), a bert_tf training checkpoint (`ckpt-<step>`)
    or a Hugging Face directory, or their `ModelSource`. The encoder must be whole; a head is
    loaded where the checkpoint has it whole, else keeps its initial values (`encoder_only`:
    always), said by a warning where the checkpoint is of the model's own class. Nothing is
    assigned before every check; optimizer state is not loaded. Raises `InputError`, naming the
    checkpoint, for none there, a damaged one, or variables that do not fit the model."""
    source = checkpoint if isinstance(checkpoint, ModelSource) else ModelSource(checkpoint)
    try:
        own = not encoder_only and source.saved_class(type(model))[0] is type(model)
        return assign(model, source.tensors(model), encoder_only, own)
    except UNREADABLE_CHECKPOINT as e:
        raise InputError(
            f"{source.weights}: the checkpoint cannot be read ({first_line(e)}); it is truncated "
            "or damaged: copy or download it again"
        ) from None


def assign(
    model: keras.Model, tensors: Tensors, encoder_only: bool = False, own_class: bool = False
) -> LoadReport:
    """Assigns `tensors` to `model` by the one rule `load_checkpoint` describes (`own_class`:
    the checkpoint is of the model's class, so a variable left out is worth a warning)."""
    source, shapes, named = tensors.source, tensors.shapes, tensors.named
    table = variable_names(model)
    encoder = set(model.encoder_variable_names())
    heads = set(table) - encoder
    unexpected = sorted(set(shapes) - set(table))
    _check_unexpected(tensors, unexpected, table)
    missing = sorted(set(table) - set(shapes) - set(tensors.optional))
    missing_encoder = [name for name in missing if name in encoder]
    if missing_encoder:
        raise InputError(
            f"{source}: {len(missing_encoder)} of the encoder's variables are not in the "
            f"checkpoint: {listing(named(missing_encoder))}; does bert_config.json belong to it?"
        )
    missing_heads = [name for name in missing if name in heads]
    whole = len(heads - set(tensors.optional))
    if missing_heads and not encoder_only and len(missing_heads) < whole:
        raise InputError(
            f"{source}: the checkpoint has some of the model's heads but not "
            f"{listing(named(missing_heads))}"
        )
    left_out = (set(table) - set(shapes)) | (heads if encoder_only else set())
    to_load = {name: variable for name, variable in table.items() if name not in left_out}
    for name, variable in to_load.items():
        if list(shapes[name]) != list(variable.shape):
            raise InputError(
                f"{source}: variable {named([name])[0]} has shape {list(shapes[name])} in the "
                f"checkpoint but the model built from the config needs {list(variable.shape)}; "
                "does bert_config.json belong to this checkpoint (or were the heads built with "
                "other arguments, such as num_labels)?"
            )
    for name, variable in to_load.items():
        variable.assign(np.asarray(tensors.read(name)).astype(variable.dtype))
    if left_out:  # a task model's new head is the usual case; its own class's, worth a word
        usual = model.head_scope is not None and not own_class
        logger.log(
            logging.INFO if usual else logging.WARNING,
            "%s has no %s; they keep their initial values", source, listing(sorted(left_out)),
        )  # fmt: skip
    if unexpected:
        logger.info("%s: not loaded (not in the model): %s", source, listing(named(unexpected)))
    return LoadReport(
        list(to_load), sorted(left_out), unexpected, tensors.skipped, source,
        head_loaded=bool(heads & set(to_load)),
    )  # fmt: skip


def _check_unexpected(tensors: Tensors, unexpected: list[str], table: dict) -> None:
    """Raises `InputError` for encoder variables the model lacks: a deeper model, or another
    network (a BERT's heads of another class are only reported)."""
    foreign = [name for name in unexpected if name.startswith("bert/")]
    depth = len({match.group(1) for match in map(_LAYER.match, table) if match})
    extra = sorted({int(match.group(1)) for match in map(_LAYER.match, foreign) if match})
    if extra and extra[-1] >= depth:
        span = f"layer_{extra[0]}" + (f" to layer_{extra[-1]}" if len(extra) > 1 else "")
        raise InputError(
            f"{tensors.source}: has encoder layers {span} beyond the model's {depth} "
            "(num_hidden_layers); does bert_config.json belong to this checkpoint?"
        )
    if foreign:
        raise InputError(
            f"{tensors.source}: {listing(tensors.named(foreign))} is not a variable of the BERT "
            "that its config describes"
        )


@dataclasses.dataclass
class ModelDirectory:
    """A model loaded from a model directory, with what goes beside its weights."""

    model: keras.Model
    vocab_file: str | None
    do_lower_case: bool
    labels: list[str] | None = None
    report: LoadReport | None = None  # what was loaded, by the checkpoint's names


def load_model_directory(
    path: str | os.PathLike | ModelSource,
    model_class: type,
    config: BertConfig | None = None,
    do_lower_case: bool | None = None,
    vocab_file: str | None = None,
    require_heads: bool = False,
    encoder_only: bool = False,
    **model_args,
) -> ModelDirectory:
    """The model of the model directory (or checkpoint) `path`, with its vocab, casing and
    labels (see `ModelSource`). The class: `model_class` built with `model_args` (or the head
    arguments of a fine-tuned output_dir of that class); on the family's root (`ConfigModel`),
    the class the files name (task_model.json, a Hugging Face `architectures`, the heads in the
    checkpoint). `config`: instead of the directory's. The casing: `ModelSource.do_lower_case`,
    `do_lower_case` its flag.

    A head the checkpoint lacks is newly initialized (a warning; an error with
    `require_heads` or for a task_model.json's model). A head of another task's class is an
    error, unless `encoder_only` (a classifier fine-tuned from a NER model's encoder, say).
    Raises `InputError` for no config or checkpoint there, a class the files name that is not
    one of ours, a head of another class, or weights that do not fit the model."""
    source = path if isinstance(path, ModelSource) else ModelSource(path)
    saved, said, head_shape = source.saved_class(model_class)
    if model_class is root_class(model_class):  # ConfigModel: the class the files name
        cls = saved
    else:
        if not encoder_only:
            _check_head_class(source.directory, model_class, saved, said)
        cls = model_class
    description = source.description
    own = description is not None and cls is saved and not (config or model_args)
    try:
        if own:
            model = cls.from_config(description["config"])
        else:
            if not model_args and cls is saved and not description:
                model_args = cls.head_arguments(head_shape)
            model = cls(config or source.config, **model_args)
    except (TypeError, ValueError, KeyError) as e:
        where = f"{os.path.join(source.directory, TASK_MODEL_FILE)}: " if own else ""
        raise InputError(f"{where}cannot build a {cls.__name__} ({first_line(e)})") from None
    report = load_checkpoint(model, source, encoder_only)
    _check_heads(model, report, require_heads or (own and not encoder_only))
    vocab_file = source.vocab_file or vocab_file
    casing = source.do_lower_case(do_lower_case, vocab_file=vocab_file)
    return ModelDirectory(model, vocab_file, casing, source.labels, report)


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
