"""The `hidden_act` values of `bert_config.json`, as functions."""

from __future__ import annotations

import math
from collections.abc import Callable

from keras import ops


def gelu(x):
    """Exact GELU, x * Phi(x): the form the released checkpoints were trained with."""
    return 0.5 * x * (1.0 + ops.erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    """The tanh approximation of GELU that the original repository switched to on 2019-02-07."""
    cdf = 0.5 * (1.0 + ops.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * ops.power(x, 3))))
    return x * cdf


ACTIVATIONS: dict[str, Callable] = {
    "gelu": gelu,
    "gelu_tanh": gelu_tanh,
    "gelu_new": gelu_tanh,
    "relu": ops.relu,
    "tanh": ops.tanh,
}


def get_activation(name: str) -> Callable:
    """Maps a `hidden_act` name to its function (BertConfig has already validated the name)."""
    return ACTIVATIONS[name]
