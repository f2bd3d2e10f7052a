"""Loading a model's weights from any kind of checkpoint, by one rule for all: the original's
names, a bert_tf training checkpoint (by each variable's Keras path), a Hugging Face directory.
The model says its own names (`model.original_variable_names()`, `hf_names`); this module knows
no model class.

    report = load_checkpoint(BertEncoder(config), "uncased_L-12_H-768_A-12/bert_model.ckpt")
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from collections.abc import Callable

import keras
import numpy as np

from bert_tf import checkpoints, hf_format
from bert_tf.checkpoints import UNREADABLE_CHECKPOINT
from bert_tf.errors import InputError, first_line

logger = logging.getLogger(__name__)

# Training state in original checkpoints that is not part of the model: Adam slots
# (`<var>/adam_m`, `<var>/adam_v`, or Keras-style `Adam`), the step and loss-scale counters.
_NOT_MODEL = re.compile(
    r"(/adam_[mv]$|/Adam(_\d+)?$|^AdamWeightDecayOptimizer|^global_step$|"
    r"^(current_loss_scale|good_steps|loss_scale)$)"
)
_LAYER = re.compile(r"bert/encoder/layer_(\d+)/")


@dataclasses.dataclass
class LoadReport:
    """What `load_checkpoint` did, by original variable name."""

    loaded: list[str]
    missing: list[str]  # in the model, not loaded (left at their initial values)
    unexpected: list[str]  # in the checkpoint, not in the model (not loaded)
    skipped: list[str]  # training state: optimizer slots, global_step
    source: str = ""  # the checkpoint read (the directory for Hugging Face's)
    head_loaded: bool = False  # whether a head took values from it


@dataclasses.dataclass
class Tensors:
    """A checkpoint's tensors under the model's original names: shapes, and how to read one."""

    source: str
    shapes: dict[str, list[int]]
    read: Callable[[str], np.ndarray]
    optional: tuple[str, ...] = ()  # may be missing: they keep their initial values
    skipped: list[str] = dataclasses.field(default_factory=list)
    # The checkpoint's own name of each, for messages (Hugging Face's), where not the original.
    own_names: dict[str, str] = dataclasses.field(default_factory=dict)

    def named(self, names) -> list[str]:
        return [self.own_names.get(name, name) for name in names]


def listing(names: list[str], most: int = 5) -> str:
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def load_checkpoint(
    model: keras.Model, checkpoint: str | os.PathLike, encoder_only: bool = False
) -> LoadReport:
    """Loads `model` (an encoder, a pre-trainer or a task model) from `checkpoint`: an original
    prefix (or one of its files, or its folder), a bert_tf training checkpoint (`ckpt-<step>`)
    or a Hugging Face directory. The encoder must be whole; a head is loaded where the
    checkpoint has it whole, else keeps its initial values (`encoder_only`: always). Nothing is
    assigned before every check; optimizer state is not loaded. Raises `InputError`, naming the
    checkpoint, for none there, a damaged one, or variables that do not fit the model."""
    if hf_format.is_hf_directory(checkpoint):
        return assign(model, _hf_tensors(model, os.fspath(checkpoint)), encoder_only)
    prefix = checkpoints.resolve_checkpoint_path(checkpoint)
    try:
        return assign(model, _tf_tensors(model, prefix), encoder_only)
    except UNREADABLE_CHECKPOINT as e:
        raise InputError(
            f"{prefix}: the checkpoint cannot be read ({first_line(e)}); it is truncated or "
            "damaged: copy or download it again"
        ) from None


def _tf_tensors(model: keras.Model, prefix: str) -> Tensors:
    reader = checkpoints.checkpoint_reader(prefix)
    shapes, keys = reader.get_variable_to_shape_map(), checkpoints.object_graph_keys(reader)
    if not keys:  # the original's names
        skipped = sorted(name for name in shapes if _NOT_MODEL.search(name))
        kept = {name: shape for name, shape in shapes.items() if name not in skipped}
        return Tensors(prefix, kept, reader.get_tensor, skipped=skipped)
    # A training checkpoint, by each variable's Keras path, not its place in the object graph:
    # any run's checkpoint gives any model its encoder.
    variables = model.original_variable_names()
    table = {name: keys[v.path] for name, v in variables.items() if v.path in keys}
    encoder = model.encoder_variable_names()
    if not set(table) & set(encoder):
        paths = [variable.path for variable in encoder.values()]
        raise InputError(
            f"{prefix}: a training checkpoint with no BERT encoder in it (none of "
            f"{listing(paths, 2)}); expected one written by run_pretraining.py or a "
            "fine-tuning script of bert_tf"
        )
    return Tensors(
        prefix,
        {name: shapes[key] for name, key in table.items()},
        lambda name: reader.get_tensor(table[name]),
        own_names={name: variable.path for name, variable in variables.items()},
    )


def _hf_tensors(model: keras.Model, directory: str) -> Tensors:
    weights = hf_format.HfWeights(directory)
    table = hf_format.original_names(model, weights.shapes)
    optional = hf_format.POOLER_NAMES  # Hugging Face's token, span and masked-LM classes lack it
    if "BertForMaskedLM" in (hf_format.read_hf_values(directory).get("architectures") or []):
        optional += hf_format.NEXT_SENTENCE_NAMES  # a masked LM without the NSP head

    def read(original: str) -> np.ndarray:
        name, transposed = table[original]
        return weights.read(name).T if transposed else weights.read(name)

    shapes = {
        original: weights.shapes[name][::-1] if transposed else weights.shapes[name]
        for original, (name, transposed) in table.items()
    }
    # Each name as the file has it, or, for one it lacks, as the model's class would.
    own = {original: name for original, (name, _) in hf_format.hf_names(model).items()}
    own.update({original: name for original, (name, _) in table.items()})
    return Tensors(directory, shapes, read, optional, own_names=own)


def assign(model: keras.Model, tensors: Tensors, encoder_only: bool = False) -> LoadReport:
    """Assigns `tensors` to `model` by the one rule `load_checkpoint` describes."""
    source, shapes, named = tensors.source, tensors.shapes, tensors.named
    table = model.original_variable_names()
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
    if missing_heads and len(missing_heads) < len(heads - set(tensors.optional)):
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
    if left_out:  # a task model's new head is the usual case; a pre-trainer's, worth a word
        level = logging.INFO if model.head_scope is not None else logging.WARNING
        logger.log(
            level, "%s has no %s; they keep their initial values", source, listing(sorted(left_out))
        )
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
