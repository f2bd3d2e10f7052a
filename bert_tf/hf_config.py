"""Hugging Face's config.json and tokenizer_config.json for a BERT, read into our `BertConfig`
and written from it. The keys that describe the network are the original's; the others describe
the library, and are dropped on the way in.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from bert_tf import filesystem
from bert_tf.config import KNOWN_KEYS, BertConfig
from bert_tf.errors import InputError
from bert_tf.fileio import read_text

CONFIG_FILE = "config.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"

# hidden_act: Hugging Face's name -> ours ("gelu" is the exact erf form in both).
_HIDDEN_ACTS = {
    "gelu": "gelu",
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "relu": "relu",
    "tanh": "tanh",
}
LAYER_NORM_EPSILON = 1e-12


def bert_config_from_hf(values: Mapping, source: str) -> BertConfig:
    """Our `BertConfig` of a Hugging Face config.json (its other keys, which describe the
    library rather than the network, are dropped; `is_decoder` is `causal_attention`).

    Raises:
        InputError: a BERT our layers do not compute (another model_type, relative positions,
            another LayerNorm epsilon or activation), naming the key and its value.
    """
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
        values["num_labels"] = 1
        values["problem_type"] = "regression"
    return values


def is_hf_directory(path: str | os.PathLike) -> bool:
    """A directory with Hugging Face's config.json (and no original bert_config.json)."""
    path = os.fspath(path)
    return filesystem.isfile(os.path.join(path, CONFIG_FILE)) and not filesystem.isfile(
        os.path.join(path, "bert_config.json")
    )


def read_hf_values(directory: str) -> dict:
    """`directory`'s config.json as it is (Hugging Face's keys).

    Raises:
        InputError: not a JSON object.
    """
    path = os.path.join(directory, CONFIG_FILE)
    try:
        values = json.loads(read_text(path, "a Hugging Face config.json (JSON)"))
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(values, dict):
        raise InputError(f"{path}: expected a JSON object")
    return values


def read_hf_config(directory: str) -> BertConfig:
    """Our `BertConfig` of `directory`'s config.json (see `bert_config_from_hf`)."""
    return bert_config_from_hf(read_hf_values(directory), os.path.join(directory, CONFIG_FILE))


def tokenizer_config(config: BertConfig, do_lower_case: bool) -> dict:
    return {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": do_lower_case,
        "model_max_length": config.max_position_embeddings,
    }
