"""Models loaded in one line from a model directory: `BertEncoder.from_pretrained(directory)`,
`BertClassifier.from_pretrained(directory, num_labels=2)` and so on for every model class.

A model directory is any of:
- a released model, or run_pretraining.py's `pretrained/`: bert_config.json, bert_model.ckpt
  (the original's variable names), vocab.txt;
- a bert_tf training output_dir: bert_config.json and `ckpt-<step>` (its latest is loaded);
- whatever else `checkpoints.load_checkpoint` reads, with its config.json (Hugging Face).

The classmethods live on `bert_tf.modeling.ConfigModel` and import this module when called:
`bert_tf.modeling` stays backend-agnostic Keras, while reading TF checkpoints needs TensorFlow.

    encoder = BertEncoder.from_pretrained("uncased_L-12_H-768_A-12")
    classifier = BertClassifier.from_pretrained("uncased_L-12_H-768_A-12", num_labels=2)
"""

from __future__ import annotations

import logging
import os

import keras
import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from bert_tf.checkpoints import TASK_MODEL_FILE, load_checkpoint, read_task_model
from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.hf_checkpoints import read_hf_config
from bert_tf.modeling.config_model import ConfigModel
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.task_model import BertTaskModel
from bert_tf.tokenization import released_model_do_lower_case, tokenizer_config_do_lower_case

logger = logging.getLogger(__name__)

# The config files a model directory may have, in the order they are looked for: ours and
# the original's, then Hugging Face's (the same keys for BERT; the others are kept as extras).
CONFIG_FILES = ("bert_config.json", "config.json")


def model_directory(path: str | os.PathLike) -> str:
    """The directory of `path`: itself, or the folder of a checkpoint prefix given instead
    (`.../bert_model.ckpt`, `.../ckpt-300`)."""
    path = os.fspath(path)
    return path if os.path.isdir(path) else os.path.dirname(path) or "."


def read_config(path: str | os.PathLike) -> BertConfig:
    """The `BertConfig` of the model directory `path` (see `CONFIG_FILES`).

    Raises:
        InputError: no config there, or a Hugging Face config of another model type.
    """
    directory = model_directory(path)
    for name in CONFIG_FILES:
        config_file = os.path.join(directory, name)
        if os.path.isfile(config_file):
            break
    else:
        raise InputError(
            f"{directory}: no {' or '.join(CONFIG_FILES)} in this model directory; pass "
            "config=BertConfig.from_json_file(...) (the config the checkpoint was trained with)"
        )
    if name == "config.json":  # Hugging Face's names and activations, mapped to ours
        return read_hf_config(directory)
    return BertConfig.from_json_file(config_file)


def load_pretrained(
    model_class: type[ConfigModel],
    path: str | os.PathLike,
    config: BertConfig | None = None,
    **model_args,
) -> ConfigModel:
    """`model_class(config, **model_args)` with the weights of the model directory `path`.

    The encoder must be in the checkpoint; the heads load when the checkpoint has them
    (a pre-training checkpoint's `cls/` heads, a fine-tuned task head) and are otherwise
    left newly initialized, which a warning says. `config`: instead of the directory's.

    Raises:
        InputError: no config or checkpoint there, or weights that do not fit the model.
    """
    model = None
    if config is None and not model_args:  # a fine-tuned output_dir knows its head's arguments
        model = _described_model(model_class, path)
    if model is None:
        model = model_class(config or read_config(path), **model_args)
    heads = _head_variables(model)
    initial = [keras.ops.convert_to_numpy(variable) for variable in heads]
    prefix = load_checkpoint(model, path)
    if isinstance(model, BertTaskModel) and _is_object_based(prefix):
        _load_task_head(model, prefix, heads)
    fresh = all(
        np.array_equal(keras.ops.convert_to_numpy(variable), value)
        for variable, value in zip(heads, initial, strict=True)
    )
    if heads and fresh:
        logger.warning(
            "%s: the checkpoint %s has no weights for its head (%s), newly initialized: "
            "train it before use",
            model_class.__name__,
            prefix,
            ", ".join(sorted({variable.path.split("/")[0] for variable in heads})),
        )
    return model


def _described_model(model_class: type[ConfigModel], path) -> ConfigModel | None:
    """The model that the fine-tuning output_dir `path`'s task_model.json describes (its
    config and head arguments, such as num_labels), when it is a `model_class`; else None."""
    directory = model_directory(path)
    if not os.path.isfile(os.path.join(directory, TASK_MODEL_FILE)):
        return None
    model, _ = read_task_model(directory)
    return model if type(model) is model_class else None


def _head_variables(model: keras.Model) -> list:
    """`model`'s variables outside its encoder: its heads'."""
    if isinstance(model, BertEncoder):
        return []
    encoder = {id(variable) for variable in model.encoder.weights}
    return [variable for variable in model.weights if id(variable) not in encoder]


def _is_object_based(prefix: str) -> bool:
    """Whether `prefix` is a bert_tf training checkpoint (Keras's object graph in it)."""
    if not tf.io.gfile.exists(prefix + ".index"):
        return False
    return (
        "_CHECKPOINTABLE_OBJECT_GRAPH"
        in tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
    )


def _load_task_head(model: BertTaskModel, prefix: str, heads: list) -> None:
    """Loads the fine-tuned head of a bert_tf training checkpoint, which `load_checkpoint`
    leaves (it takes a task model's encoder only).

    The training checkpoint records the whole model; a variable is found by its Keras path
    (`classifier/output_weights`), not by its position in the object graph, so another task's
    head is never taken for this one (and the key it is saved under, through the model or the
    optimizer that tracks it, does not matter). As for original checkpoints: all the head or
    none of it.
    """
    reader = tf.train.load_checkpoint(prefix)
    graph = trackable_object_graph_pb2.TrackableObjectGraph()
    graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    keys = {
        attribute.full_name: attribute.checkpoint_key
        for node in graph.nodes
        for attribute in node.attributes
    }
    found = [variable for variable in heads if variable.path in keys]
    if not found:
        return
    if len(found) < len(heads):
        missing = [variable.path for variable in heads if variable.path not in keys]
        raise InputError(f"{prefix}: the checkpoint has some of the model's head but not {missing}")
    values = [reader.get_tensor(keys[variable.path]) for variable in heads]
    for variable, value in zip(heads, values, strict=True):
        if list(value.shape) != list(variable.shape):
            raise InputError(
                f"{prefix}: {variable.path} has shape {list(value.shape)} in the checkpoint "
                f"but the model needs {list(variable.shape)}; was it fine-tuned with other "
                "head arguments (num_labels)?"
            )
    for variable, value in zip(heads, values, strict=True):
        variable.assign(value.astype(variable.dtype))


def read_do_lower_case(path: str | os.PathLike) -> bool:
    """Whether the model directory `path`'s vocab is lower-cased: its tokenizer_config.json's
    `do_lower_case` (Hugging Face), else what the released model of that name was trained
    with, else True (logged: the released English models are mostly uncased)."""
    directory = model_directory(path)
    declared = tokenizer_config_do_lower_case(directory)
    if declared is not None:
        return declared
    released = released_model_do_lower_case(os.path.basename(os.path.normpath(directory)))
    if released is not None:
        return released
    logger.info(
        "%s: do_lower_case=True assumed (pass do_lower_case=False for a cased model)", directory
    )
    return True
