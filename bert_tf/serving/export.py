"""What every task's SavedModel for TF Serving shares: the `serve` signature's inputs
(`MODEL_INPUTS`) and its request checks, the raw-text signatures' pair check, the model in the
export's dtype, the metadata file beside it, and the export written whole beside `export_dir`
and swapped into place (`export_model`). Each task's export is its own module
(`classification.serving`, `squad.serving`, `ner.serving`, `swag.serving`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence

import keras
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text, staging_folder
from bert_tf.serving.warmup import warmup_requests, write_warmup_requests

logger = logging.getLogger(__name__)


# The model's inputs: the `serve` signature of every export takes them as int32 [batch, seq].
MODEL_INPUTS = ("input_ids", "input_mask", "segment_ids")
# What a client needs to know of an export, where SavedModels keep files TensorFlow does not
# read; it also marks a folder as an export of ours, the only kind an export replaces.
METADATA_FILE = os.path.join("assets.extra", "bert_tf.json")


def check_export_dir(export_dir: str, output_dir: str | None = None) -> None:
    """Raises `InputError` naming --export_dir unless it is a new folder, an empty one or an
    earlier export of ours (a SavedModel with METADATA_FILE), which the export replaces whole:
    nothing else is ever deleted. Called before any work, and again just before the
    replacement."""
    path = filesystem.absolute(export_dir)
    if output_dir and filesystem.is_url(path) == filesystem.is_url(output_dir):
        output_dir_path = filesystem.absolute(output_dir).rstrip("/")
        if (output_dir_path + "/").startswith(path.rstrip("/") + "/"):
            raise InputError(
                f"--export_dir={export_dir}: holds --output_dir={output_dir}, whose checkpoints "
                "the export would replace; expected a folder of its own, e.g. "
                f"{os.path.join(output_dir, 'export')}"
            )
    if filesystem.exists(path) and not filesystem.isdir(path):
        raise InputError(f"--export_dir={export_dir}: is a file; expected a folder")
    if not filesystem.isdir(path) or not filesystem.listdir(path) or _is_export(path):
        return
    names = sorted(filesystem.listdir(path))
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    raise InputError(
        f"--export_dir={export_dir}: holds {shown}, not a SavedModel exported here; expected a "
        "new or empty folder, or an earlier export (which is replaced)"
    )


def _is_export(path: str) -> bool:
    return filesystem.isfile(os.path.join(path, "saved_model.pb")) and filesystem.isfile(
        os.path.join(path, METADATA_FILE)
    )


def export_model(
    model,
    export_dir: str,
    outputs_of: Callable[[dict], dict],
    text_endpoint: Callable,
    text_signature: list[tf.TensorSpec],
    metadata: dict,
    modules: Sequence[tf.Module] = (),
    ids_shape: tuple = (None, None),
) -> str:
    """Writes `model` as a SavedModel for TF Serving with two signatures, and returns
    `export_dir`:
    - `serving_default`: `text_endpoint` over the string tensors of `text_signature` (raw text
      in; the task's featurization in the graph, with the TF `modules` it uses);
    - `serve`: the model's inputs (`ids_shape`, int32) -> `outputs_of(the model's outputs)`.

    `metadata`: what a client needs to know, in assets.extra/bert_tf.json (its
    max_seq_length: the longest of the warm-up requests TF Serving replays as it loads the
    export, assets.extra/tf_serving_warmup_requests).
    """
    archive = keras.export.ExportArchive()
    # Not archive.track(model): the endpoints' own variables are saved anyway, and tracking the
    # model saved each weight a second time (its Keras variables beside their TF variables).
    for module in modules:
        archive.track(module)

    def serve(input_ids, input_mask, segment_ids):
        features = {"input_ids": input_ids, "input_mask": input_mask, "segment_ids": segment_ids}
        with tf.control_dependencies(check_request(features, model.config)):
            return outputs_of(model(features, training=False))

    ids_signature = [tf.TensorSpec(ids_shape, tf.int32, name=name) for name in MODEL_INPUTS]
    archive.add_endpoint("serve", serve, input_signature=ids_signature)
    archive.add_endpoint("serving_default", text_endpoint, input_signature=text_signature)
    dtype = keras.backend.standardize_dtype(model.compute_dtype)
    names = tuple(spec.name for spec in text_signature)
    requests = warmup_requests(names, MODEL_INPUTS, ids_shape, metadata["max_seq_length"])
    return write_archive(archive, export_dir, {**metadata, "dtype": dtype}, requests)


def check_request(features: dict, config) -> list:
    """The `serve` signature's checks of a request (a bad one fails with a message that names
    the input and the limit, not with an error from inside the model): the three inputs of one
    shape, at most max_position_embeddings tokens, ids within the vocab, segment ids within
    type_vocab_size, an input_mask of 0s and 1s."""
    input_ids, input_mask, segment_ids = (features[name] for name in MODEL_INPUTS)
    shape = tf.shape(input_ids)
    tokens = config.max_position_embeddings
    return [
        tf.debugging.assert_equal(
            tf.shape(input_mask), shape, message="serve: input_mask and input_ids differ in shape"
        ),
        tf.debugging.assert_equal(
            tf.shape(segment_ids), shape, message="serve: segment_ids and input_ids differ in shape"
        ),
        tf.debugging.assert_less_equal(
            shape[-1], tokens, message=f"serve: more tokens than max_position_embeddings={tokens}"
        ),
        *_in_range(features, "input_ids", config.vocab_size, "vocab_size="),
        *_in_range(features, "segment_ids", config.type_vocab_size, "type_vocab_size="),
        *_in_range(features, "input_mask", 2),
    ]


def _in_range(features: dict, name: str, limit: int, limit_name: str = "") -> list:
    values = features[name]
    message = f"serve: {name} out of range; expected values in [0, {limit_name}{limit})"
    return [
        tf.debugging.assert_non_negative(values, message=message),
        tf.debugging.assert_less(values, tf.constant(limit, values.dtype), message=message),
    ]


def check_text_pairs(texts: dict[str, tf.Tensor], hint: str) -> list[tf.Tensor]:
    """The raw-text signature's check of a request: its inputs `texts` {name: [batch] strings}
    are rows, the first of each row named first. Returns the same tensors, each readable only
    after the check has passed: a graph runs ops in no fixed order, so an op fed the unchecked
    inputs could fail first with TensorFlow's "Incompatible shapes: [3] vs. [2]", which names
    neither input, or (SQuAD's) answer fewer questions than were asked."""
    (first, text), *others = texts.items()
    checks = []
    for name, other in others:
        len_a, len_b = tf.size(text), tf.size(other)
        # The lengths are known only when a request comes: the message is formatted in the graph.
        message = tf.strings.format(
            f"serving_default: {first} has {{}} strings and {name} {{}}; expected one {name} per "
            f"{first} ({hint})",
            (len_a, len_b),
        )
        checks.append(tf.debugging.Assert(tf.equal(len_a, len_b), [message]))
    with tf.control_dependencies(checks):
        return [tf.identity(value) for value in texts.values()]


def model_in_dtype(model, dtype: str):
    """`model` itself for float32; else the same model rebuilt with `dtype` weights and compute
    (bfloat16: half the memory, and faster where the CPU has AVX512-BF16 or AMX, or on GPUs;
    the softmax and the LayerNorms' statistics stay float32)."""
    if dtype == "float32":
        return model
    policy = keras.config.dtype_policy()
    keras.config.set_dtype_policy(dtype)
    try:
        converted = type(model).from_config(model.get_config())
    finally:
        keras.config.set_dtype_policy(policy)
    converted.set_weights([keras.ops.cast(w, dtype) for w in model.get_weights()])
    return converted


def write_archive(
    archive: keras.export.ExportArchive, export_dir: str, metadata: dict, requests: list = ()
) -> str:
    """Writes the SavedModel beside `export_dir` and renames it into place (an existing
    export is replaced only by a complete one), with `metadata` (what a client needs to know)
    in assets.extra/bert_tf.json, where SavedModels keep files TensorFlow does not read, and
    TF Serving's warm-up `requests` (warmup.py) beside it. Returns `export_dir`."""
    export_dir = filesystem.absolute(export_dir).rstrip("/")
    _restore_interrupted_swap(export_dir)
    with staging_folder(export_dir) as staging:
        archive.write_out(staging, verbose=False)
        atomic_write_text(os.path.join(staging, METADATA_FILE), json.dumps(metadata, indent=2))
        if requests:
            write_warmup_requests(staging, requests)
        check_export_dir(export_dir)  # what is there now: an earlier export, or nothing
        _swap_in(staging, export_dir)
    logger.info("SavedModel for serving in %s", export_dir)
    return export_dir


# The name an earlier export is moved to while the new one is moved in (PID: the writer's).
_PREVIOUS = ".previous-{pid}"


def _swap_in(staging: str, export_dir: str) -> None:
    """Moves `staging` to `export_dir`, an earlier export aside first and removed last: at every
    moment one whole export is under the real name, but between two renames (a kill there
    leaves the earlier one as `export_dir.previous-PID`, which the next export puts back)."""
    previous = None
    if filesystem.isdir(export_dir):
        previous = export_dir + _PREVIOUS.format(pid=os.getpid())
        filesystem.rename(export_dir, previous, last=("saved_model.pb",))
    try:
        filesystem.rename(staging, export_dir, last=("saved_model.pb",))
    except BaseException:
        if previous:
            filesystem.rmtree(export_dir)
            filesystem.rename(previous, export_dir, last=("saved_model.pb",))
        raise
    if previous:
        filesystem.rmtree(previous)


def _restore_interrupted_swap(export_dir: str) -> None:
    """Puts back the earlier export that a killed `_swap_in` left aside, if nothing took its
    place."""
    for previous in filesystem.glob(filesystem.escape(export_dir) + _PREVIOUS.format(pid="*")):
        if _is_export(export_dir):
            filesystem.rmtree(previous)  # the swap got as far as the new one
        else:
            filesystem.rmtree(export_dir)  # a copy (on a URL) cut short
            filesystem.rename(previous, export_dir, last=("saved_model.pb",))
            logger.warning("%s: put back the export an interrupted export moved aside", export_dir)
