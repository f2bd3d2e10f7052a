"""Loading a model's weights from any kind of checkpoint, one entry for all: the original's
names, a bert_tf training checkpoint, a Hugging Face directory.

    report = load_checkpoint(BertEncoder(config), "uncased_L-12_H-768_A-12/bert_model.ckpt")
"""

from __future__ import annotations

import dataclasses
import logging
import os

import keras
import numpy as np
from tensorflow.core.protobuf import trackable_object_graph_pb2

from bert_tf import checkpoints, hf_checkpoints
from bert_tf.checkpointing import UNREADABLE_CHECKPOINT
from bert_tf.checkpoints import LoadReport
from bert_tf.errors import InputError, first_line
from bert_tf.hf_config import is_hf_directory
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.task_model import BertTaskModel

logger = logging.getLogger(__name__)


def load_checkpoint(model: keras.Model, checkpoint: str | os.PathLike) -> LoadReport:
    """Loads `model` (a `BertEncoder`, `BertPretrainer` or fine-tuning `BertTaskModel`) from
    any kind of checkpoint, by one rule for all: the encoder must be whole, each head is loaded
    when the checkpoint has it and keeps its initial values when it has none.

    - the original's names (`checkpoints.load_original_checkpoint`): a prefix such as
      `.../bert_model.ckpt`, one of its files, or its directory;
    - a bert_tf training checkpoint (`ckpt-<step>`, or its directory's latest), by Keras path
      (`load_object_based`);
    - a Hugging Face BERT directory: config.json and model.safetensors
      (`hf_checkpoints.load_hf_checkpoint`).

    Optimizer state is not loaded. Returns what was loaded, by the checkpoint's names, with
    `source` the prefix (the directory for Hugging Face's).

    Raises:
        InputError: no checkpoint there, one that cannot be read, no encoder in it, or
            variables that do not fit the model.
    """
    heads = head_variables(model)
    initial = [keras.ops.convert_to_numpy(variable) for variable in heads]
    if is_hf_directory(checkpoint):
        source = os.fspath(checkpoint)
        report = hf_checkpoints.load_hf_checkpoint(model, checkpoint)
    else:
        source = checkpoints.resolve_checkpoint_path(checkpoint)
        report = _load_prefix(model, source)
    head_loaded = any(
        not np.array_equal(keras.ops.convert_to_numpy(variable), value)
        for variable, value in zip(heads, initial, strict=True)
    )
    return dataclasses.replace(report, source=source, head_loaded=head_loaded)


def head_variables(model: keras.Model) -> list:
    """`model`'s variables outside its encoder: its heads' (none for an encoder)."""
    if isinstance(model, BertEncoder):
        return []
    encoder = {id(variable) for variable in model.encoder.weights}
    return [variable for variable in model.weights if id(variable) not in encoder]


def _load_prefix(model: keras.Model, prefix: str) -> LoadReport:
    try:
        if is_object_based(prefix):
            return load_object_based(model, prefix)
        return checkpoints.load_original_checkpoint(model, prefix)
    except UNREADABLE_CHECKPOINT as e:
        raise InputError(
            f"{prefix}: the checkpoint cannot be read ({first_line(e)}); it is truncated or "
            "damaged: copy or download it again"
        ) from None


# The entry that makes a checkpoint object-based: Keras's object graph, which bert_tf's
# training checkpoints record (the original's are name-based).
OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"


def is_object_based(prefix: str) -> bool:
    """Whether the checkpoint `prefix` is a bert_tf training checkpoint (`ckpt-<step>`)."""
    return OBJECT_GRAPH in checkpoints.checkpoint_reader(prefix).get_variable_to_shape_map()


def object_graph_keys(prefix: str) -> dict[str, str]:
    """Keras path (`embeddings/word_embeddings`) -> key in the training checkpoint `prefix`,
    for every variable its object graph records."""
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(checkpoints.checkpoint_reader(prefix).get_tensor(OBJECT_GRAPH))
    return {
        attribute.full_name: attribute.checkpoint_key
        for node in graph.nodes
        for attribute in node.attributes
    }


def load_object_based(model: keras.Model, prefix: str) -> LoadReport:
    """Loads a bert_tf training checkpoint into `model` by each variable's Keras path
    (`embeddings/word_embeddings`, `classifier/output_weights`), as `load_original_checkpoint`
    does by the original names: the encoder must be whole; each head is loaded when the
    checkpoint has it and left at its initial values when it has none (a pre-training
    checkpoint under a new classifier); a head found in part is an error.

    A path, not a place in the object graph: the checkpoint of a pre-training or fine-tuning
    run gives any model its encoder, and another model's head is never taken for this one.
    Nothing is assigned before every check.

    Raises:
        InputError: no BERT encoder in the checkpoint (a checkpoint of something else, or
            saved under other names), one in part, or a shape other than the model's.
    """
    reader = checkpoints.checkpoint_reader(prefix)
    keys = object_graph_keys(prefix)
    shapes = reader.get_variable_to_shape_map()
    encoder = model if isinstance(model, BertEncoder) else model.encoder
    heads = head_variables(model)
    missing = [variable.path for variable in encoder.weights if variable.path not in keys]
    if len(missing) == len(encoder.weights):
        raise InputError(
            f"{prefix}: a training checkpoint with no BERT encoder in it (none of "
            f"{checkpoints.listing(missing, 2)}); expected one written by run_pretraining.py or a "
            "fine-tuning script of bert_tf"
        )
    if missing:
        raise InputError(
            f"{prefix}: {len(missing)} of the encoder's variables are not in the checkpoint: "
            f"{checkpoints.listing(missing)}; does bert_config.json belong to this checkpoint?"
        )
    missing_heads = [variable.path for variable in heads if variable.path not in keys]
    if missing_heads and len(missing_heads) < len(heads):
        raise InputError(
            f"{prefix}: the checkpoint has some of the model's heads but not "
            f"{checkpoints.listing(missing_heads)}"
        )
    to_load = [v for v in model.weights if v.path in keys and v.path not in missing_heads]
    _check_shapes(prefix, to_load, {v.path: shapes[keys[v.path]] for v in to_load})
    values = [reader.get_tensor(keys[variable.path]) for variable in to_load]
    for variable, value in zip(to_load, values, strict=True):
        variable.assign(value.astype(variable.dtype))
    if missing_heads:
        logger.log(
            logging.INFO if isinstance(model, BertTaskModel) else logging.WARNING,
            "%s has no %s; they keep their initial values",
            prefix,
            checkpoints.listing(missing_heads),
        )
    return LoadReport(
        loaded=[variable.path for variable in to_load],
        missing=missing_heads,
        unexpected=[],
        skipped=[],
    )


def _check_shapes(prefix: str, variables: list, shapes: dict) -> None:
    for variable in variables:
        shape = list(shapes[variable.path])
        if shape != list(variable.shape):
            raise InputError(
                f"{prefix}: {variable.path} has shape {shape} in the checkpoint but the model "
                f"built from the config needs {list(variable.shape)}; does bert_config.json "
                "belong to this checkpoint (or were the heads built with other arguments, "
                "such as num_labels)?"
            )
