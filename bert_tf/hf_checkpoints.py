"""Hugging Face BERT checkpoints (config.json, model.safetensors, vocab.txt), read and written.

The name table is the original's (`bert_tf.checkpoints.original_variable_names`) with a
translation of each original TF1 name into Hugging Face's module path, so the two formats
share one correspondence with our Keras variables:

    bert/encoder/layer_3/attention/self/query/kernel <-> encoder.layer.3.attention.self.query.weight
    bert/embeddings/LayerNorm/gamma <-> embeddings.LayerNorm.weight (in older files .gamma)
    cls/squad/output_weights <-> qa_outputs.weight

The encoder's names carry a `bert.` prefix in every class but `BertModel`. A Dense `kernel` is
[in, out] and a torch Linear `weight` [out, in], so kernels are transposed; the heads'
`output_weights` already have the [out, in] layout and are not. The masked-LM decoder is the
word-embedding table (tied), so `cls.predictions.decoder.weight` is not a weight of its own.

Weights are read and written with `safetensors.numpy` only: no torch, no pickle. Every name and
shape is checked before anything is assigned or written.

    load_hf_checkpoint(BertEncoder(config), "bert-base-uncased/")
    save_hf_weights(classifier, "mrpc_hf/model.safetensors")

(The config files are `bert_tf.hf_config`'s; converting a whole directory, `bert_tf.convert`.)
"""

from __future__ import annotations

import json
import logging
import os
import re

import keras
import numpy as np
import safetensors.numpy
from safetensors import SafetensorError, safe_open

from bert_tf import filesystem
from bert_tf.checkpoints import (
    HEAD_SCOPES,
    LoadReport,
    load_named_tensors,
    original_variable_names,
)
from bert_tf.errors import InputError
from bert_tf.fileio import atomic_open
from bert_tf.hf_config import read_hf_values
from bert_tf.modeling.classifier import BertClassifier
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.multiple_choice import BertMultipleChoice
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.modeling.span_labeler import BertSpanLabeler
from bert_tf.modeling.token_classifier import BertTokenClassifier

logger = logging.getLogger(__name__)

WEIGHTS_FILE = "model.safetensors"
WEIGHTS_INDEX_FILE = "model.safetensors.index.json"

# Our model class -> the Hugging Face class with the same head.
ARCHITECTURES = {
    BertEncoder: "BertModel",
    BertPretrainer: "BertForPreTraining",
    BertClassifier: "BertForSequenceClassification",
    BertTokenClassifier: "BertForTokenClassification",
    BertSpanLabeler: "BertForQuestionAnswering",
    BertMultipleChoice: "BertForMultipleChoice",
}
# Hugging Face builds these without the pooler (`add_pooling_layer=False`).
WITHOUT_POOLER = ("BertForMaskedLM", "BertForTokenClassification", "BertForQuestionAnswering")
POOLER_NAMES = ("bert/pooler/dense/kernel", "bert/pooler/dense/bias")
NEXT_SENTENCE_NAMES = ("cls/seq_relationship/output_weights", "cls/seq_relationship/output_bias")

# Whole tensors whose names do not follow the scope rule below (original -> Hugging Face).
_TENSORS = {
    "bert/embeddings/word_embeddings": "embeddings.word_embeddings.weight",
    "bert/embeddings/token_type_embeddings": "embeddings.token_type_embeddings.weight",
    "bert/embeddings/position_embeddings": "embeddings.position_embeddings.weight",
    "cls/predictions/output_bias": "cls.predictions.bias",
    "cls/seq_relationship/output_weights": "cls.seq_relationship.weight",
    "cls/seq_relationship/output_bias": "cls.seq_relationship.bias",
    f"{HEAD_SCOPES['classifier']}output_weights": "classifier.weight",
    f"{HEAD_SCOPES['classifier']}output_bias": "classifier.bias",
    f"{HEAD_SCOPES['squad']}output_weights": "qa_outputs.weight",
    f"{HEAD_SCOPES['squad']}output_bias": "qa_outputs.bias",
}
_TENSORS_BACK = {hf: original for original, hf in _TENSORS.items()}
# A Dense or LayerNorm variable, by its last name part: original -> Hugging Face.
_PARAMETERS = {"kernel": "weight", "bias": "bias", "gamma": "weight", "beta": "bias"}
# Hugging Face files that are not weights: the position-id buffer older versions saved, and
# the masked-LM decoder (tied to the word embeddings; its bias is cls.predictions.bias).
_NOT_WEIGHTS = re.compile(r"(^|\.)embeddings\.position_ids$|^cls\.predictions\.decoder\.")
_ENCODER_SCOPES = ("embeddings.", "encoder.", "pooler.")


def hf_name(original: str) -> tuple[str, bool]:
    """The Hugging Face name of an original variable (without the `bert.` prefix) and whether
    its value is transposed (a Dense kernel)."""
    if original in _TENSORS:
        return _TENSORS[original], False
    scope, parameter = original.rsplit("/", 1)
    scope = re.sub(r"/layer_(\d+)/", r"/layer.\1/", scope).removeprefix("bert/")
    return f"{scope.replace('/', '.')}.{_PARAMETERS[parameter]}", parameter == "kernel"


def original_name(name: str) -> tuple[str, bool] | None:
    """The original variable name of a Hugging Face weight and whether its value is
    transposed; None where it is not a weight (a buffer, the tied decoder); `name` itself
    (not an original name) where it is unknown."""
    name = name.removeprefix("bert.")
    if _NOT_WEIGHTS.search(name):
        return None
    if name in _TENSORS_BACK:
        return _TENSORS_BACK[name], False
    scope, _, parameter = name.rpartition(".")
    if scope.endswith("LayerNorm"):
        parameter = {"weight": "gamma", "bias": "beta"}.get(parameter, parameter)
    elif parameter == "weight":
        parameter = "kernel"
    scope = re.sub(r"\.layer\.(\d+)\.", r".layer_\1.", scope).replace(".", "/")
    if name.startswith(_ENCODER_SCOPES):
        scope = "bert/" + scope
    return f"{scope}/{parameter}", parameter == "kernel"


def architecture(model: keras.Model) -> str:
    """The Hugging Face class of `model` (see `ARCHITECTURES`).

    Raises:
        InputError: a model Hugging Face's BERT classes have no place for (a BiLSTM head,
            a feature-based tagger).
    """
    for setting in ("bilstm_units", "feature_based"):
        if getattr(model, setting, None):
            raise InputError(
                f"{type(model).__name__} with {setting}={getattr(model, setting)!r} has layers "
                "that Hugging Face's BERT classes do not have; only the original heads convert"
            )
    return ARCHITECTURES[type(model)]


def hf_variable_names(model: keras.Model) -> dict[str, tuple[keras.Variable, bool]]:
    """The name table in Hugging Face's names: name -> (the model's variable, transposed?),
    for the class `architecture(model)` (no pooler where that class has none)."""
    arch = architecture(model)
    prefix = "" if arch == "BertModel" else "bert."
    table = {}
    for original, variable in original_variable_names(model).items():
        if arch in WITHOUT_POOLER and original in POOLER_NAMES:
            continue
        name, transposed = hf_name(original)
        table[(prefix if name.startswith(_ENCODER_SCOPES) else "") + name] = (variable, transposed)
    return table


# Reading a Hugging Face directory. -----------------------------------------------------------


def _inside(directory: str, name: str, listed_in: str) -> str:
    """`name`, a file listed in `listed_in`, as a path inside `directory`: a name that leads out
    of it (`../`, an absolute path, a link) is refused, not read."""
    if filesystem.is_url(directory):  # no links there: only the name can lead out
        parts = name.split("/")
        inside = not name.startswith("/") and ".." not in parts and "://" not in name
        path = os.path.join(directory, name)
    else:
        root = os.path.realpath(directory)
        path = os.path.realpath(os.path.join(directory, name))
        inside = (path + "/").startswith(root + "/")
    if not inside:
        raise InputError(
            f"{listed_in}: lists {name!r}, outside {directory}; expected the name of a file in "
            "the model's folder"
        )
    return path


class HfWeights:
    """The weights of a Hugging Face directory: model.safetensors, or the shards that
    model.safetensors.index.json lists; read lazily, by name.

    Raises:
        InputError: no safetensors file (a pytorch_model.bin is refused: reading it would
            need torch and unpickling), or one that cannot be read.
    """

    def __init__(self, directory: str) -> None:
        self.directory = directory
        index = os.path.join(directory, WEIGHTS_INDEX_FILE)
        single = os.path.join(directory, WEIGHTS_FILE)
        if filesystem.isfile(single):
            files = [single]
        elif filesystem.isfile(index):
            with filesystem.open_file(index) as f:
                weight_map = json.load(f).get("weight_map", {})
            files = [_inside(directory, name, index) for name in sorted(set(weight_map.values()))]
        else:
            files = sorted(
                filesystem.glob(os.path.join(filesystem.escape(directory), "*.safetensors"))
            )
        if not files:
            pickled = [
                name
                for name in ("pytorch_model.bin", "tf_model.h5")
                if filesystem.isfile(os.path.join(directory, name))
            ]
            found = f"only {pickled[0]}" if pickled else "no model.safetensors"
            raise InputError(
                f"{directory}: {found}; bert_tf reads Hugging Face weights from safetensors "
                "only: save them with transformers' save_pretrained(..., "
                "safe_serialization=True), or use the Hub's 'Convert to safetensors'"
            )
        self.file_of: dict[str, str] = {}
        self.shapes: dict[str, list[int]] = {}
        for path in files:
            with self._open(path) as f:
                for name in f.keys():
                    self.file_of[name] = path
                    self.shapes[name] = list(f.get_slice(name).get_shape())

    def _open(self, path: str):
        if not filesystem.isfile(path):
            raise InputError(f"{path}: no such file (listed in {WEIGHTS_INDEX_FILE})")
        try:
            if filesystem.is_url(path):  # safe_open maps a local file; a URL's is read whole
                with filesystem.open_file(path, "rb") as f:
                    return _InMemory(safetensors.numpy.load(f.read()))
            return safe_open(path, framework="np")
        except (SafetensorError, OSError) as e:
            raise InputError(f"{path}: not a readable safetensors file ({e})") from None

    def read(self, name: str) -> np.ndarray:
        with self._open(self.file_of[name]) as f:
            try:
                return f.get_tensor(name)
            except (SafetensorError, TypeError, ValueError) as e:
                # bfloat16 has no numpy dtype.
                raise InputError(
                    f"{self.file_of[name]}: {name} cannot be read as a numpy array ({e}); "
                    "save the model in float32 or float16"
                ) from None


class _InMemory:
    """A safetensors file read whole, with the part of `safe_open`'s interface read here."""

    def __init__(self, tensors: dict[str, np.ndarray]) -> None:
        self.tensors = tensors

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass

    def keys(self) -> list[str]:
        return list(self.tensors)

    def get_slice(self, name: str) -> np.ndarray:  # an array's shape is `get_shape`'s
        return _Shaped(self.tensors[name].shape)

    def get_tensor(self, name: str) -> np.ndarray:
        return self.tensors[name]


class _Shaped:
    def __init__(self, shape) -> None:
        self.shape = shape

    def get_shape(self) -> list[int]:
        return list(self.shape)


def _original_tensors(weights: HfWeights) -> dict[str, tuple[str, bool]]:
    """original name -> (Hugging Face name, transposed?) for every weight in `weights`.

    Raises:
        InputError: a Hugging Face name that is not one of BERT's, naming it.
    """
    table = {}
    for name in sorted(weights.shapes):
        mapped = original_name(name)
        if mapped is None:
            continue
        original, transposed = mapped
        table[original] = (name, transposed)
    # Files that keep only the decoder's copy of the masked-LM bias.
    decoder_bias = next((n for n in weights.shapes if n.endswith("predictions.decoder.bias")), None)
    if decoder_bias and "cls/predictions/output_bias" not in table:
        table["cls/predictions/output_bias"] = (decoder_bias, False)
    return table


# The heads' original names (the encoder's follow from the model).
_HEAD_NAMES = frozenset(
    [name for name in _TENSORS if not name.startswith("bert/")]
    + [f"cls/predictions/transform/{n}" for n in ("dense/kernel", "dense/bias")]
    + [f"cls/predictions/transform/LayerNorm/{n}" for n in ("gamma", "beta")]
)


def _known_names(model: keras.Model) -> set[str]:
    """Every original name a BERT of `model`'s shape can have, with every head."""
    encoder = model if isinstance(model, BertEncoder) else model.encoder
    return set(original_variable_names(encoder)) | _HEAD_NAMES


def load_hf_checkpoint(
    model: keras.Model, directory: str | os.PathLike, optional: tuple[str, ...] = POOLER_NAMES
) -> LoadReport:
    """Loads a Hugging Face BERT directory into `model` (a `BertEncoder`, `BertPretrainer` or
    fine-tuning `BertTaskModel`), as `load_original_checkpoint` loads the original's names: all
    the encoder's weights must be there, but the pooler (Hugging Face's token classifier,
    question answering and masked-LM classes have none; it keeps its initial values); the
    heads are loaded when present, left at their initial values when absent.

    Raises:
        InputError: no safetensors weights; a weight that is not one of BERT's, or missing;
            a shape other than the model's (each naming the weight).
    """
    directory = os.fspath(directory)
    weights = HfWeights(directory)
    if "BertForMaskedLM" in (read_hf_values(directory).get("architectures") or []):
        optional = tuple(optional) + NEXT_SENTENCE_NAMES  # a masked LM without the NSP head
    table = _original_tensors(weights)
    known = _known_names(model)
    for original, (name, _) in table.items():
        if original not in known:
            raise InputError(
                f"{directory}: {name} is not a weight of the BERT that its config.json describes"
            )
    shapes = {
        original: weights.shapes[name][::-1] if transposed else weights.shapes[name]
        for original, (name, transposed) in table.items()
    }

    def read(original: str) -> np.ndarray:
        name, transposed = table[original]
        value = weights.read(name)
        return value.T if transposed else value

    try:
        return load_named_tensors(model, directory, shapes, read, optional)
    except InputError as e:
        # The loader names original variables; say which Hugging Face weights they are.
        raise InputError(_in_hf_names(str(e))) from None


def _in_hf_names(message: str) -> str:
    def replace(match: re.Match) -> str:
        return hf_name(match.group(0))[0]

    return re.sub(r"\b(bert/[\w/]+|cls/[\w/]+|output_weights|output_bias)", replace, message)


# Writing a Hugging Face directory. -----------------------------------------------------------


def save_hf_weights(model: keras.Model, path: str) -> None:
    """Writes `model`'s weights in Hugging Face's names as one safetensors file."""
    tensors = {}
    for name, (variable, transposed) in hf_variable_names(model).items():
        value = keras.ops.convert_to_numpy(variable)
        tensors[name] = np.ascontiguousarray(value.T if transposed else value)
    # transformers loads only files whose metadata says which framework wrote them.
    with atomic_open(path, "wb") as f:
        f.write(safetensors.numpy.save(tensors, metadata={"format": "pt"}))
