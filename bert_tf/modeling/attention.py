"""Multi-head self-attention exactly as the original's `attention_layer`."""

from __future__ import annotations

import math

import keras
from keras import ops

from bert_tf.modeling.embeddings import truncated_normal

# As the original: masked scores get -10000 added rather than -inf, so a row whose every position
# is masked still yields a (uniform) distribution instead of NaN.
MASK_ADDER = -10000.0


def attention_mask_adder(input_mask, causal: bool = False):
    """Turns `input_mask` [B, S] (1 = real token) into an additive score mask.

    Only the attended-to ("to") positions are masked, as the original does; with `causal=True`
    (the paper's left-to-right ablation) position i also cannot attend to any j > i.

    Returns: [B, 1, S, S] if causal, else [B, 1, 1, S]; 0 where attention is allowed, -10000
    elsewhere.
    """
    to_mask = ops.cast(input_mask, "float32")[:, None, None, :]  # [B, 1, 1, S]
    if causal:
        seq_length = ops.shape(input_mask)[1]
        rows = ops.arange(seq_length)[:, None]
        cols = ops.arange(seq_length)[None, :]
        lower = ops.cast(cols <= rows, "float32")  # [S, S]
        to_mask = to_mask * lower[None, None]  # [B, 1, S, S]
    return (1.0 - to_mask) * MASK_ADDER


@keras.saving.register_keras_serializable(package="bert_tf")
class AttentionMask(keras.layers.Layer):
    """`attention_mask_adder` as a layer, so that the functional encoder can call it."""

    def __init__(self, causal: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.causal = causal

    def call(self, input_mask):
        return attention_mask_adder(input_mask, self.causal)

    def compute_output_shape(self, input_mask_shape):
        batch, seq = input_mask_shape
        return (batch, 1, seq if self.causal else 1, seq)


@keras.saving.register_keras_serializable(package="bert_tf")
class SelfAttention(keras.layers.Layer):
    """`softmax(Q K^T / sqrt(size_per_head) + mask) V`, split into `num_heads` heads.

    Q, K and V are dense layers with [H, H] kernels named query, key and value as in the original
    checkpoints, so their weights load without reshaping. Dropout is applied to the attention
    probabilities. The output is the heads' contexts concatenated (the original's
    `attention/self` scope); the output projection belongs to `TransformerLayer`.

    Shapes: B = batch, S = sequence, N = num_heads, D = size per head, H = N * D.
    """

    def __init__(
        self,
        num_heads: int,
        size_per_head: int,
        dropout_rate: float,
        initializer_range: float,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.size_per_head = size_per_head
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        width = num_heads * size_per_head
        dense = dict(
            units=width,
            kernel_initializer=truncated_normal(initializer_range),
            dtype=self.dtype_policy,
        )
        self.query = keras.layers.Dense(name="query", **dense)
        self.key = keras.layers.Dense(name="key", **dense)
        self.value = keras.layers.Dense(name="value", **dense)
        self.dropout = keras.layers.Dropout(dropout_rate, dtype=self.dtype_policy)

    def build(self, hidden_shape, mask_adder_shape=None) -> None:
        for dense in (self.query, self.key, self.value):
            dense.build(hidden_shape)

    def _split_heads(self, x, batch, seq):
        # [B*S, H] -> [B, N, S, D]
        x = ops.reshape(x, (batch, seq, self.num_heads, self.size_per_head))
        return ops.transpose(x, (0, 2, 1, 3))

    def project(self, hidden):
        """hidden [B, S, H] -> q, k, v, each [B, N, S, D]."""
        batch, seq = ops.shape(hidden)[0], ops.shape(hidden)[1]
        # Each dense layer on [B*S, H]: a 2-D product and its bias are one fused op on CPUs
        # (oneDNN), where a 3-D input makes a tensordot, its reshapes and a separate add.
        tokens = ops.reshape(hidden, (-1, hidden.shape[-1]))
        return tuple(
            self._split_heads(dense(tokens), batch, seq)
            for dense in (self.query, self.key, self.value)
        )

    def probabilities(self, scores, mask_adder, training=None):
        """scores [B, N, S, S] (scaled) -> the attention probabilities, dropout applied."""
        # The softmax runs in float32 even under mixed precision: -10000 and exp() need the range.
        scores = ops.cast(scores, "float32") + ops.cast(mask_adder, "float32")
        probs = ops.cast(ops.softmax(scores, axis=-1), self.compute_dtype)
        return self.dropout(probs, training=training)

    def call(self, hidden, mask_adder, training=None):
        # hidden: [B, S, H]; mask_adder: [B, 1, 1, S] or [B, 1, S, S]
        q, k, v = self.project(hidden)  # [B, N, S, D] each
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2)))  # [B, N, S, S]
        scores = scores * (1.0 / math.sqrt(float(self.size_per_head)))
        probs = self.probabilities(scores, mask_adder, training)  # [B, N, S, S]
        context = ops.matmul(probs, v)  # [B, N, S, D]
        context = ops.transpose(context, (0, 2, 1, 3))  # [B, S, N, D]
        batch, seq = ops.shape(context)[0], ops.shape(context)[1]
        return ops.reshape(context, (batch, seq, self.num_heads * self.size_per_head))

    def compute_output_shape(self, hidden_shape, mask_adder_shape=None):
        return tuple(hidden_shape[:-1]) + (self.num_heads * self.size_per_head,)
