"""`BertConfig`: the architecture, read from and written to the original `bert_config.json`.

The keys are exactly the original's (`modeling.BertConfig`); keys we do not know (multilingual
models carry `directionality` and `pooler_*`, for example) are kept and written back unchanged,
as the original's `from_dict` does by copying every key.

    config = BertConfig.from_json_file("uncased_L-12_H-768_A-12/bert_config.json")
    config.hidden_size   # 768
    config.to_json_file("out/bert_config.json")
"""

from __future__ import annotations

import copy
import json
import logging
import os
from typing import Any

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text, read_text

logger = logging.getLogger(__name__)

# The original's defaults (modeling.BertConfig.__init__); vocab_size has none.
DEFAULTS: dict[str, Any] = {
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 512,
    "type_vocab_size": 16,
    "initializer_range": 0.02,
}
KNOWN_KEYS = ("vocab_size",) + tuple(DEFAULTS)

# The layers a feature-based head reads instead of fine-tuning the encoder (`BertTokenClassifier`'s
# `feature_based`; the rows of Table 7's feature-based half, by flag value): here, beside the
# architecture, so that run_ner.py checks its flag before TensorFlow starts.
FEATURES = (
    "embeddings",  # the embedding layer's output
    "second_to_last_hidden",
    "last_hidden",
    "weighted_sum_last_four_hidden",
    "concat_last_four_hidden",
    "weighted_sum_all_layers",  # of the transformer layers (12 in BERT-BASE)
)

# "gelu" is the exact erf form the released checkpoints were trained with; "gelu_tanh" (alias
# "gelu_new", the name other libraries use) is the approximation the original switched to later.
HIDDEN_ACTS = ("gelu", "gelu_tanh", "gelu_new", "relu", "tanh")

_INT_KEYS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "max_position_embeddings",
    "type_vocab_size",
)
_PROB_KEYS = ("hidden_dropout_prob", "attention_probs_dropout_prob")


def _is_number(value: Any) -> bool:
    # JSON true/false are Python bools, which are ints; a config value is never meant as one.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class BertConfig:
    """The BERT architecture: the fields of the original `bert_config.json`.

    Args:
        vocab_size: size of the WordPiece vocabulary (30522 for the uncased English models).
        hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, hidden_act,
        hidden_dropout_prob, attention_probs_dropout_prob, max_position_embeddings,
        type_vocab_size, initializer_range: as the original; defaults are BERT-Base's.
        causal_attention: not an original key: each position attends only to itself and the
            positions before it (a model pre-trained left to right, paper Table 5's "LTR & No
            NSP", keeps it when fine-tuned). Written to bert_config.json only when true.
        **extra: unknown keys, kept so that writing the config back loses nothing.

    Raises:
        InputError: a value is out of range, naming the key, the value and what is expected.
    """

    def __init__(self, vocab_size: int, **kwargs: Any) -> None:
        self._assign(dict(kwargs, vocab_size=vocab_size))
        self.validate()

    def _assign(self, values: dict[str, Any]) -> None:
        values = dict(values)
        self.vocab_size = values.pop("vocab_size")
        for key, default in DEFAULTS.items():
            setattr(self, key, values.pop(key, default))
        self.causal_attention = bool(values.pop("causal_attention", False))
        self.extra: dict[str, Any] = values

    def replace(self, **changes: Any) -> BertConfig:
        """A copy with `changes` (e.g. `causal_attention=True`)."""
        return BertConfig.from_dict({**self.to_dict(), **changes})

    @property
    def size_per_head(self) -> int:
        return self.hidden_size // self.num_attention_heads

    def validate(self, source: str = "BertConfig") -> None:
        """Raises `InputError` naming `source`, the key, its value and what was expected."""

        def fail(key: str, expected: str) -> None:
            raise InputError(f"{source}: {key}={getattr(self, key)!r}, expected {expected}")

        for key in _INT_KEYS:
            value = getattr(self, key)
            if not _is_number(value) or not isinstance(value, int) or value < 1:
                fail(key, "a positive integer")
        for key in _PROB_KEYS:
            value = getattr(self, key)
            if not _is_number(value) or not 0.0 <= value < 1.0:
                fail(key, "a probability in [0, 1)")
        if not _is_number(self.initializer_range) or self.initializer_range <= 0:
            fail("initializer_range", "a positive number")
        if self.hidden_act not in HIDDEN_ACTS:
            fail("hidden_act", "one of " + ", ".join(HIDDEN_ACTS))
        if self.hidden_size % self.num_attention_heads:
            raise InputError(
                f"{source}: hidden_size={self.hidden_size} is not a multiple of "
                f"num_attention_heads={self.num_attention_heads}"
            )

    def check_sequence_length(self, max_seq_length: int, source: str) -> None:
        """Raises unless every position of `max_seq_length` tokens has an embedding."""
        if max_seq_length > self.max_position_embeddings:
            raise InputError(
                f"--max_seq_length={max_seq_length} is longer than max_position_embeddings="
                f"{self.max_position_embeddings} in {source}"
            )

    def check_vocab(self, vocab_size: int, vocab_file: str) -> None:
        """Raises unless every id of a vocabulary of `vocab_size` tokens has an embedding."""
        if vocab_size > self.vocab_size:
            raise InputError(
                f"{vocab_file}: the vocabulary has {vocab_size} tokens but the model's "
                f"vocab_size is {self.vocab_size}; do the vocab and bert_config.json belong "
                "together?"
            )

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: str = "BertConfig") -> BertConfig:
        if not isinstance(values, dict):
            raise InputError(f"{source}: expected a JSON object, got {type(values).__name__}")
        if "vocab_size" not in values:
            raise InputError(f"{source}: the required key vocab_size is missing")
        config = cls.__new__(cls)
        config._assign(values)
        config.validate(source)
        return config

    @classmethod
    def from_json_file(cls, json_file: str | os.PathLike) -> BertConfig:
        """Reads an original `bert_config.json`; errors name the file."""
        json_file = os.fspath(json_file)
        if not filesystem.isfile(json_file):
            raise InputError(f"{json_file}: no such bert_config.json file")
        text = read_text(json_file, "a bert_config.json (JSON)")
        try:
            values = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"{json_file}: not valid JSON ({e})") from None
        config = cls.from_dict(values, source=json_file)
        # As the original, a key the file lacks takes BERT-Base's default: said, not silent.
        missing = [key for key in DEFAULTS if key not in values]
        if missing:
            logger.warning(
                "%s has no %s; using the original's default%s: %s",
                json_file,
                ", ".join(missing),
                "s" if len(missing) > 1 else "",
                ", ".join(f"{key}={DEFAULTS[key]!r}" for key in missing),
            )
        return config

    def to_dict(self) -> dict[str, Any]:
        values = {key: getattr(self, key) for key in KNOWN_KEYS}
        if self.causal_attention:
            values["causal_attention"] = True
        values.update(copy.deepcopy(self.extra))
        return values

    def to_json_string(self) -> str:
        # As the original: indent 2, keys sorted, so files diff cleanly against released ones.
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, json_file: str | os.PathLike) -> None:
        atomic_write_text(json_file, self.to_json_string())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BertConfig) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:  # equal configs hash alike (a cache key, a set of shapes)
        return hash(self.to_json_string())

    def __repr__(self) -> str:
        return f"BertConfig({self.to_dict()})"
