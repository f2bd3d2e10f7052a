"""Google's original TF1 checkpoints (`bert_model.ckpt`), read and written by variable name.

The whole correspondence is one table, `original_variable_names`: original TF1 name -> our Keras
variable. Our layers keep the original's layouts (Dense kernels are [in, out] as `tf.layers.dense`
makes them; `cls/seq_relationship/output_weights` stays [2, H]), so no value is transposed or
reshaped on the way in or out, and a round trip is bit-exact.

    encoder = BertEncoder(config)
    report = load_original_checkpoint(encoder, "uncased_L-12_H-768_A-12/bert_model.ckpt")
    save_original_checkpoint(encoder, "out/bert_model.ckpt")
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
from collections.abc import Callable, Collection

import keras
import numpy as np
import tensorflow as tf

from bert_tf import filesystem
from bert_tf.errors import InputError, first_line
from bert_tf.fileio import (
    atomic_write_text,
    remove_stale_temporaries,
    temporary_prefix,
)
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.modeling.task_model import BertTaskModel

logger = logging.getLogger(__name__)

# Training state in original checkpoints that is not part of the model: Adam slots
# (`<var>/adam_m`, `<var>/adam_v`, or Keras-style `Adam`), the step and loss-scale counters.
_NOT_MODEL = re.compile(
    r"(/adam_[mv]$|/Adam(_\d+)?$|^AdamWeightDecayOptimizer|^global_step$|"
    r"^(current_loss_scale|good_steps|loss_scale)$)"
)


def _encoder_names(encoder: BertEncoder) -> dict[str, keras.Variable]:
    emb = encoder.embeddings
    names = {
        "bert/embeddings/word_embeddings": emb.word_embeddings,
        "bert/embeddings/token_type_embeddings": emb.token_type_embeddings,
        "bert/embeddings/position_embeddings": emb.position_embeddings,
        "bert/embeddings/LayerNorm/gamma": emb.layer_norm.gamma,
        "bert/embeddings/LayerNorm/beta": emb.layer_norm.beta,
    }
    for i, layer in enumerate(encoder.transformer_layers):
        scope = f"bert/encoder/layer_{i}"
        attention = layer.attention_self
        for dense, tf1_name in (
            (attention.query, "attention/self/query"),
            (attention.key, "attention/self/key"),
            (attention.value, "attention/self/value"),
            (layer.attention_output, "attention/output/dense"),
            (layer.intermediate, "intermediate/dense"),
            (layer.output_dense, "output/dense"),
        ):
            names[f"{scope}/{tf1_name}/kernel"] = dense.kernel
            names[f"{scope}/{tf1_name}/bias"] = dense.bias
        for norm, tf1_name in (
            (layer.attention_layer_norm, "attention/output/LayerNorm"),
            (layer.output_layer_norm, "output/LayerNorm"),
        ):
            names[f"{scope}/{tf1_name}/gamma"] = norm.gamma
            names[f"{scope}/{tf1_name}/beta"] = norm.beta
    names["bert/pooler/dense/kernel"] = encoder.pooler.kernel
    names["bert/pooler/dense/bias"] = encoder.pooler.bias
    return names


def _pretraining_head_names(pretrainer: BertPretrainer) -> dict[str, keras.Variable]:
    mlm, nsp = pretrainer.masked_lm_head, pretrainer.next_sentence_head
    # The MLM decoder is bert/embeddings/word_embeddings itself (tied), so it has no entry here.
    return {
        "cls/predictions/transform/dense/kernel": mlm.transform.kernel,
        "cls/predictions/transform/dense/bias": mlm.transform.bias,
        "cls/predictions/transform/LayerNorm/gamma": mlm.layer_norm.gamma,
        "cls/predictions/transform/LayerNorm/beta": mlm.layer_norm.beta,
        "cls/predictions/output_bias": mlm.output_bias,
        "cls/seq_relationship/output_weights": nsp.output_weights,
        "cls/seq_relationship/output_bias": nsp.output_bias,
    }


# A task head's scope in the original's checkpoints, by its layer name: run_classifier
# creates `output_weights`, `output_bias` at the top level (the NER token classifier and the
# SWAG choice vector, which the original lacks, are named the same way), run_squad under
# `cls/squad/`.
HEAD_SCOPES = {"classifier": "", "squad": "cls/squad/"}


def original_variable_names(model: keras.Model) -> dict[str, keras.Variable]:
    """The name table: original TF1 variable name -> the model's Keras variable.

    `model` is a `BertEncoder` (the `bert/` variables), a `BertPretrainer` (plus `cls/`), or a
    fine-tuning `BertTaskModel`: plus its head's `output_weights` and `output_bias` in the
    scope of `HEAD_SCOPES` (the classifier's [num_labels, H] at the top level, SQuAD's
    [2, H] under `cls/squad/`, NER's per-token classifier and SWAG's [1, H] choice vector as
    the classifier's).
    """
    if isinstance(model, BertEncoder):
        return _encoder_names(model)
    if isinstance(model, BertPretrainer):
        return {**_encoder_names(model.encoder), **_pretraining_head_names(model)}
    if isinstance(model, BertTaskModel):
        scope = HEAD_SCOPES[model.head.name]
        return {
            **_encoder_names(model.encoder),
            f"{scope}output_weights": model.head.output_weights,
            f"{scope}output_bias": model.head.output_bias,
        }
    raise TypeError(f"no original names are known for {type(model).__name__}")


def checkpoint_reader(prefix: str):
    """The reader of the checkpoint `prefix` (as resolved by `resolve_checkpoint_path`).
    Not `tf.train.load_checkpoint`, which takes a prefix that its file system calls a folder
    (ram:// calls every prefix of a file's name one) for a folder of checkpoints."""
    return tf.compat.v1.train.NewCheckpointReader(prefix)


def resolve_checkpoint_path(path: str | os.PathLike) -> str:
    """Returns the checkpoint prefix for `path`, as users of the original pass it.

    Accepts the prefix (`.../bert_model.ckpt`), a file of it (`bert_model.ckpt.index`, a common
    slip, see google-research/bert#555), or a directory (its latest checkpoint, else its
    `bert_model.ckpt`). Raises `InputError` naming the path when no checkpoint is there.
    """
    path = os.fspath(path)
    prefix = re.sub(r"\.(index|meta|data-\d{5}-of-\d{5})$", "", path)
    if filesystem.isdir(prefix):
        prefix = tf.train.latest_checkpoint(prefix) or os.path.join(prefix, "bert_model.ckpt")
    if not filesystem.isfile(prefix + ".index"):
        raise InputError(
            f"{path}: no checkpoint found (expected the prefix of a TF checkpoint such as "
            f".../bert_model.ckpt, with bert_model.ckpt.index beside it)"
        )
    return prefix


@dataclasses.dataclass
class LoadReport:
    """What `load_original_checkpoint` did, by original variable name."""

    loaded: list[str]
    missing: list[str]  # in the model, not in the checkpoint (left at their initial values)
    unexpected: list[str]  # in the checkpoint, not in the model (not loaded)
    skipped: list[str]  # training state: optimizer slots, global_step
    source: str = ""  # the checkpoint read
    head_loaded: bool = False  # whether a head outside the encoder took values from it


def listing(names: list[str], most: int = 5) -> str:
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def _missing_heads(model: keras.Model, table: dict, shapes: dict, prefix: str) -> list[str]:
    """The model's head variables the checkpoint lacks: all of them or none (a pre-training
    checkpoint has no task head, a released one no pre-training heads).

    Raises:
        InputError: an encoder variable is missing, or only some of the heads'.
    """
    encoder = model if isinstance(model, BertEncoder) else model.encoder
    head_names = set(table) - set(_encoder_names(encoder))
    missing = sorted(set(table) - set(shapes))
    missing_heads = [name for name in missing if name in head_names]
    missing_encoder = [name for name in missing if name not in head_names]
    if missing_encoder:
        raise InputError(
            f"{prefix}: {len(missing_encoder)} of the model's variables are not in the "
            f"checkpoint: {listing(missing_encoder)}"
        )
    if missing_heads and len(missing_heads) < len(head_names):
        raise InputError(
            f"{prefix}: the checkpoint has some of the model's heads but not "
            f"{listing(missing_heads)}"
        )
    return missing_heads


def load_original_checkpoint(model: keras.Model, checkpoint: str | os.PathLike) -> LoadReport:
    """Loads an original-format checkpoint into `model` by the original variable names.

    Every `bert/` variable must be present. The heads (the `cls/` pre-training heads, or a
    classifier's `output_weights`/`output_bias`) are loaded when the checkpoint has them and
    left at their initial values when it has none (a pre-trained checkpoint under a new
    classifier; converted checkpoints that carry the encoder only); a checkpoint with only
    some of them is an error.
    Optimizer slots and global_step are skipped; other names the model lacks (a fine-tuned
    classifier's output_weights, say) are reported in `LoadReport.unexpected` and logged.

    Raises:
        InputError: no checkpoint at `checkpoint`; a required variable is missing; a variable's
            shape differs from the model's (naming the variable and both shapes).
    """
    prefix = resolve_checkpoint_path(checkpoint)
    reader = checkpoint_reader(prefix)
    return load_named_tensors(model, prefix, reader.get_variable_to_shape_map(), reader.get_tensor)


def load_named_tensors(
    model: keras.Model,
    source: str,
    shapes: dict[str, list[int]],
    read: Callable[[str], np.ndarray],
    optional: Collection[str] = (),
) -> LoadReport:
    """Assigns `read(name)` to `model`'s variable of each original name in `shapes`, as
    `load_original_checkpoint` describes; `optional` names may be missing too (they keep their
    initial values). `source` names the checkpoint in errors and log lines."""
    table = original_variable_names(model)
    skipped = sorted(name for name in shapes if _NOT_MODEL.search(name))
    unexpected = sorted(set(shapes) - set(table) - set(skipped))
    missing_optional = sorted(set(optional) & set(table) - set(shapes))
    present = {name: shape for name, shape in shapes.items() if name not in missing_optional}
    missing_heads = _missing_heads(model, table, {**present, **dict.fromkeys(optional)}, source)
    left_out = set(missing_heads) | set(missing_optional)
    to_load = {name: variable for name, variable in table.items() if name not in left_out}
    # Nothing is assigned before every check: a failed load changes nothing.
    extra = _layers(unexpected)
    if extra:
        raise InputError(
            f"{source}: has encoder layers {_span(extra)} beyond the model's "
            f"{len(_layers(table))} (num_hidden_layers); does bert_config.json belong to this "
            "checkpoint?"
        )
    for name, variable in to_load.items():
        if list(shapes[name]) != list(variable.shape):
            raise InputError(
                f"{source}: variable {name} has shape {list(shapes[name])} in the checkpoint "
                f"but the model built from the config needs {list(variable.shape)}; "
                f"does bert_config.json belong to this checkpoint?"
            )
    for name, variable in to_load.items():
        variable.assign(np.asarray(read(name)).astype(variable.dtype))
    loaded = list(to_load)

    missing = sorted(left_out)
    if missing:
        logger.log(
            logging.INFO if isinstance(model, BertTaskModel) else logging.WARNING,
            "%s has no %s; they keep their initial values",
            source,
            listing(missing),
        )
    if unexpected:
        logger.info("%s: not loaded (not in the model): %s", source, listing(unexpected))
    return LoadReport(loaded=loaded, missing=missing, unexpected=unexpected, skipped=skipped)


def _layers(names) -> list[int]:
    """The encoder layers (`bert/encoder/layer_<i>/...`) that `names` hold variables of."""
    found = (re.match(r"bert/encoder/layer_(\d+)/", name) for name in names)
    return sorted({int(match.group(1)) for match in found if match})


def _span(layers: list[int]) -> str:
    return f"layer_{layers[0]}" + (f" to layer_{layers[-1]}" if len(layers) > 1 else "")


def save_original_checkpoint(model: keras.Model, checkpoint_prefix: str | os.PathLike) -> str:
    """Writes `model`'s weights as a TF1 name-based checkpoint under the original names.

    The result is what the original code and `tf.train.list_variables` read:
    `<prefix>.index`, `<prefix>.data-00000-of-00001`, and a `checkpoint` state file naming it.
    Files are written under a temporary prefix and renamed, so a crash leaves no partial
    checkpoint under the real name. Returns the prefix.
    """
    table = original_variable_names(model)
    return write_original_checkpoint(
        {name: keras.ops.convert_to_numpy(variable) for name, variable in table.items()},
        checkpoint_prefix,
    )


def write_original_checkpoint(
    tensors: dict[str, np.ndarray], checkpoint_prefix: str | os.PathLike
) -> str:
    """Writes `tensors` (original name -> value) as `save_original_checkpoint` does."""
    prefix = os.fspath(checkpoint_prefix)
    directory = os.path.dirname(prefix) or "."
    filesystem.makedirs(directory)
    names = sorted(tensors)
    values = [tf.constant(np.asarray(tensors[name])) for name in names]

    remove_stale_temporaries(prefix)
    tmp_prefix = temporary_prefix(prefix)
    data_suffix = ".data-00000-of-00001"
    try:
        tf.raw_ops.SaveV2(
            prefix=tmp_prefix,
            tensor_names=names,
            shape_and_slices=[""] * len(names),
            tensors=values,
        )
        # The index is what makes a checkpoint visible, so it moves into place last.
        filesystem.rename(tmp_prefix + data_suffix, prefix + data_suffix)
        filesystem.rename(tmp_prefix + ".index", prefix + ".index")
    except (tf.errors.OpError, OSError) as e:
        for suffix in (data_suffix, ".index"):
            with contextlib.suppress(FileNotFoundError):
                filesystem.remove(tmp_prefix + suffix)
        raise InputError(
            f"{prefix}: cannot write the checkpoint ({first_line(e)}); nothing was left under "
            "that name"
        ) from None
    base = os.path.basename(prefix)
    atomic_write_text(
        os.path.join(directory, "checkpoint"),
        f'model_checkpoint_path: "{base}"\nall_model_checkpoint_paths: "{base}"\n',
    )
    return prefix
