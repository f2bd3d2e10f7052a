"""Hugging Face's BERT files (config.json, tokenizer_config.json, model.safetensors), read into
ours and written from them. The config's keys that describe the network are the original's
(the others describe the library, dropped on the way in). The weights' names follow from the
original's (`model.original_variable_names()`) by one rule, `hf_name`, but for those a model
class lists in its `hf_names` (the embedding tables, the heads):

    bert/encoder/layer_3/attention/self/query/kernel <-> encoder.layer.3.attention.self.query.weight

with a `bert.` prefix on the encoder's in every class but `BertModel`, and kernels transposed
(a Dense kernel is [in, out], a torch Linear weight [out, in]). Read and written with
safetensors' numpy API only: no torch, no pickle.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping

import keras
import numpy as np
import safetensors.numpy
from safetensors import SafetensorError, safe_open

from bert_tf.config import KNOWN_KEYS, BertConfig
from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_open, read_text
from bert_tf.model_io.checkpoints import listing, variable_names

CONFIG_FILE = "config.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
WEIGHTS_FILE = "model.safetensors"
WEIGHTS_INDEX_FILE = "model.safetensors.index.json"
POOLER_NAMES = ("bert/pooler/dense/kernel", "bert/pooler/dense/bias")
NEXT_SENTENCE_NAMES = ("cls/seq_relationship/output_weights", "cls/seq_relationship/output_bias")
# hidden_act: Hugging Face's name -> ours ("gelu" is the exact erf form in both).
_HIDDEN_ACTS = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh"}
_HIDDEN_ACTS |= {"relu": "relu", "tanh": "tanh"}
LAYER_NORM_EPSILON = 1e-12
# A Dense or LayerNorm variable, by its last name part: original -> Hugging Face.
_PARAMETERS = {"kernel": "weight", "bias": "bias", "gamma": "weight", "beta": "bias"}
# Files that are not weights: the position-id buffer older versions saved, and the masked-LM
# decoder (tied to the word embeddings; its bias is cls.predictions.bias).
_NOT_WEIGHTS = re.compile(r"(^|\.)embeddings\.position_ids$|^cls\.predictions\.decoder\.")
_ENCODER_SCOPES = ("embeddings.", "encoder.", "pooler.")


def read_hf_config(directory: str) -> BertConfig:
    """Our `BertConfig` of `directory`'s config.json (`is_decoder` is `causal_attention`).
    Raises `InputError` for a BERT our layers do not compute (another model_type, relative
    positions, another LayerNorm epsilon or activation), naming the key and its value."""
    source, values = os.path.join(directory, CONFIG_FILE), read_hf_values(directory)
    checks = {
        "model_type": ("bert",),
        "position_embedding_type": ("absolute",),
        "layer_norm_eps": (LAYER_NORM_EPSILON,),
        "hidden_act": tuple(_HIDDEN_ACTS),
        "add_cross_attention": (False,),
    }
    for key, expected in checks.items():
        if key in values and values[key] not in expected:
            raise InputError(
                f"{source}: {key}={values[key]!r}, expected {' or '.join(map(repr, expected))}"
            )
    known = {key: values[key] for key in KNOWN_KEYS if key in values}
    known["hidden_act"] = _HIDDEN_ACTS[values.get("hidden_act", "gelu")]
    if values.get("is_decoder"):
        known["causal_attention"] = True
    return BertConfig.from_dict(known, source=source)


def hf_config(
    config: BertConfig, arch: str, labels: list[str] | None = None, regression: bool = False
) -> dict:
    """Hugging Face's config.json of `config` for the class `arch`, with `labels` as
    id2label/label2id (a classifier's or tagger's outputs)."""
    values = {"architectures": [arch], "model_type": "bert"}
    values.update({key: getattr(config, key) for key in KNOWN_KEYS})
    values["hidden_act"] = {"gelu_tanh": "gelu_new"}.get(config.hidden_act, config.hidden_act)
    values.update(
        layer_norm_eps=LAYER_NORM_EPSILON,
        position_embedding_type="absolute",
        pad_token_id=0,
        is_decoder=config.causal_attention,
    )
    if labels:
        values["id2label"] = {str(i): label for i, label in enumerate(labels)}
        values["label2id"] = {label: i for i, label in enumerate(labels)}
    if regression:
        values.update(num_labels=1, problem_type="regression")
    return values


def is_hf_directory(path: str | os.PathLike) -> bool:
    """A directory with Hugging Face's config.json (and no original bert_config.json)."""
    path = os.fspath(path)
    return filesystem.isfile(os.path.join(path, CONFIG_FILE)) and not filesystem.isfile(
        os.path.join(path, "bert_config.json")
    )


def read_hf_values(directory: str, name: str = CONFIG_FILE) -> dict:
    """`directory`'s config.json (or `name`) as it is: Hugging Face's keys."""
    path = os.path.join(directory, name)
    try:
        values = json.loads(read_text(path, f"a Hugging Face {name} (JSON)"))
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(values, dict):
        raise InputError(f"{path}: expected a JSON object")
    return values


def hf_name(original: str, special: Mapping[str, str] = {}) -> tuple[str, bool]:  # noqa: B006
    """The Hugging Face name of an original variable (without the `bert.` prefix) and whether
    its value is transposed (a Dense kernel); `special`: a model's `hf_names`."""
    if original in special:
        return special[original], False
    scope, parameter = original.rsplit("/", 1)
    scope = re.sub(r"/layer_(\d+)/", r"/layer.\1/", scope).removeprefix("bert/")
    return f"{scope.replace('/', '.')}.{_PARAMETERS[parameter]}", parameter == "kernel"


def hf_names(model: keras.Model) -> dict[str, tuple[str, bool]]:
    """original name -> (Hugging Face name, transposed?) for each of `model`'s variables, in
    its Hugging Face class (`model.hf_architecture`; no pooler where that class has none)."""
    special = model.hf_names
    bert = "" if model.hf_architecture == "BertModel" else "bert."
    table = {}
    for original in model.original_variable_names():
        if original in POOLER_NAMES and not model.hf_pooler:
            continue
        name, transposed = hf_name(original, special)
        table[original] = ((bert if name.startswith(_ENCODER_SCOPES) else "") + name, transposed)
    return table


def original_names(model: keras.Model, names) -> dict[str, tuple[str, bool]]:
    """original name -> (Hugging Face name, transposed?) for the weights `names` of a Hugging
    Face file, as `model` names them; buffers and the tied decoder left out, and a name that is
    not one of `model`'s mapped to itself."""
    special = {hf: original for original, hf in model.hf_names.items()}
    table = {}
    for name in sorted(names):
        short = name.removeprefix("bert.")
        if _NOT_WEIGHTS.search(short):
            continue
        if short in special:
            table[special[short]] = (name, False)
            continue
        scope, _, parameter = short.rpartition(".")
        if scope.endswith("LayerNorm"):
            parameter = {"weight": "gamma", "bias": "beta"}.get(parameter, parameter)
        elif parameter == "weight":
            parameter = "kernel"
        scope = re.sub(r"\.layer\.(\d+)\.", r".layer_\1.", scope).replace(".", "/")
        scope = "bert/" + scope if short.startswith(_ENCODER_SCOPES) else scope
        table[f"{scope}/{parameter}"] = (name, parameter == "kernel")
    # Files that keep only the decoder's copy of the masked-LM bias.
    decoder_bias = next((n for n in names if n.endswith("predictions.decoder.bias")), None)
    if decoder_bias and "cls/predictions/output_bias" not in table:
        table["cls/predictions/output_bias"] = (decoder_bias, False)
    return table


def weight_files(directory: str) -> list[str]:
    """model.safetensors, or the shards that model.safetensors.index.json lists: names in the
    folder (one leading out, `../` or absolute, is refused; a link is the owner's own: the
    Hub's cache links every file to its blobs/). Raises `InputError` without safetensors (a
    pytorch_model.bin is refused: reading it needs torch and pickle)."""
    index = os.path.join(directory, WEIGHTS_INDEX_FILE)
    if filesystem.isfile(os.path.join(directory, WEIGHTS_FILE)):
        return [os.path.join(directory, WEIGHTS_FILE)]
    if filesystem.isfile(index):
        values = json.loads(read_text(index, "a safetensors index (JSON)"))
        names = sorted(set((values.get("weight_map") or {}).values()))
        for name in names:
            if name.startswith("/") or ".." in re.split(r"[/\\]", name) or "://" in name:
                raise InputError(
                    f"{index}: lists {name!r}, outside {directory}; expected the name of a file "
                    "in the model's folder"
                )
        return [os.path.join(directory, name) for name in names]
    files = sorted(filesystem.glob(os.path.join(filesystem.escape(directory), "*.safetensors")))
    if files:
        return files
    others = ("pytorch_model.bin", "tf_model.h5")
    pickled = [name for name in others if filesystem.isfile(os.path.join(directory, name))]
    raise InputError(
        f"{directory}: {f'only {pickled[0]}' if pickled else 'no model.safetensors'}; bert_tf "
        "reads Hugging Face weights from safetensors only: save them with transformers' "
        "save_pretrained(..., safe_serialization=True), or use the Hub's 'Convert to safetensors'"
    )


class HfWeights:
    """The weights of a Hugging Face directory by name: `shapes` from the files' headers, `read`
    from the files mapped (a URL's copied to a local temporary file once, when first read)."""

    def __init__(self, directory: str) -> None:
        self.file_of: dict[str, str] = {}
        self.shapes: dict[str, list[int]] = {}
        self._copies: dict[str, tempfile._TemporaryFileWrapper] = {}  # removed with `self`
        for path in weight_files(directory):
            if not filesystem.isfile(path):
                raise InputError(f"{path}: no such file (listed in {WEIGHTS_INDEX_FILE})")
            for name, shape in _header_shapes(path).items():
                self.file_of[name], self.shapes[name] = path, shape

    def read(self, name: str) -> np.ndarray:
        path = self.file_of[name]
        try:
            if filesystem.is_url(path) and path not in self._copies:  # safetensors maps files
                copy = self._copies[path] = tempfile.NamedTemporaryFile(suffix=".safetensors")
                with filesystem.open_file(path, "rb") as f:
                    shutil.copyfileobj(f, copy)
                copy.flush()
            local = self._copies[path].name if path in self._copies else path
            with safe_open(local, framework="np") as f:
                return f.get_tensor(name)
        except (SafetensorError, OSError) as e:
            raise InputError(f"{path}: not a readable safetensors file ({e})") from None
        except (TypeError, ValueError) as e:  # a dtype numpy has none for (float8)
            raise InputError(
                f"{path}: {name} cannot be read as a numpy array ({e}); save the model in "
                "float32, float16 or bfloat16"
            ) from None


def _header_shapes(path: str) -> dict[str, list[int]]:
    """The shape of each tensor in the safetensors file `path`, from its header alone (an
    8-byte little-endian length, then JSON): a URL's head is known without downloading its
    weights. Ours because safetensors reads headers from a local path only."""
    with filesystem.open_file(path, "rb") as f:
        length = int.from_bytes(f.read(8), "little")
        header = f.read(length) if length <= 100_000_000 else b""  # safetensors' own limit
    try:
        tensors = json.loads(header).items()
        return {k: [int(n) for n in v["shape"]] for k, v in tensors if k != "__metadata__"}
    except (ValueError, TypeError, KeyError, AttributeError):
        raise InputError(f"{path}: not a readable safetensors file (its header)") from None


def architecture(model: keras.Model) -> str:
    """The Hugging Face class of `model`. Raises `InputError` for layers Hugging Face's BERT
    classes have no place for (a BiLSTM head, a feature-based tagger)."""
    extra = sorted(set(variable_names(model)) - set(model.original_variable_names()))
    if extra or model.hf_architecture is None:
        raise InputError(
            f"{type(model).__name__} has layers that Hugging Face's BERT classes do not have "
            f"({listing(extra, 2) or 'its head'}); only the original heads convert"
        )
    return model.hf_architecture


def save_hf_weights(model: keras.Model, path: str) -> None:
    """Writes `model`'s weights in Hugging Face's names as one safetensors file."""
    architecture(model)
    variables = model.original_variable_names()
    tensors = {}
    for original, (name, transposed) in hf_names(model).items():
        value = keras.ops.convert_to_numpy(variables[original])
        tensors[name] = np.ascontiguousarray(value.T if transposed else value)
    # transformers loads only files whose metadata says which framework wrote them.
    with atomic_open(path, "wb") as f:
        f.write(safetensors.numpy.save(tensors, metadata={"format": "pt"}))
