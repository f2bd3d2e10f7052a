"""One post-LayerNorm transformer block, named as the original's `encoder/layer_{i}`."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.attention import SelfAttention
from bert_tf.modeling.embeddings import LAYER_NORM_EPSILON, truncated_normal


@keras.saving.register_keras_serializable(package="bert_tf")
class TransformerLayer(keras.layers.Layer):
    """`h = LN(x + drop(W_o attn(x)))`, then `out = LN(h + drop(W_2 act(W_1 h)))` (post-LN).

    Sub-layers keep the original's scope names: `attention_self` (query/key/value),
    `attention_output` + `attention_layer_norm`, `intermediate`, `output` + `output_layer_norm`.

    Shapes: B = batch, S = sequence, H = hidden size, I = intermediate size.
    """

    def __init__(
        self,
        hidden_size: int,
        num_attention_heads: int,
        intermediate_size: int,
        hidden_act: str,
        hidden_dropout_prob: float,
        attention_probs_dropout_prob: float,
        initializer_range: float,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.initializer_range = initializer_range

        policy = self.dtype_policy
        init = truncated_normal(initializer_range)
        self.attention_self = SelfAttention(
            num_heads=num_attention_heads,
            size_per_head=hidden_size // num_attention_heads,
            dropout_rate=attention_probs_dropout_prob,
            initializer_range=initializer_range,
            dtype=policy,
            name="attention_self",
        )
        self.attention_output = keras.layers.Dense(
            hidden_size, kernel_initializer=init, dtype=policy, name="attention_output"
        )
        self.attention_layer_norm = keras.layers.LayerNormalization(
            epsilon=LAYER_NORM_EPSILON, dtype=policy, name="attention_layer_norm"
        )
        self.intermediate = keras.layers.Dense(
            intermediate_size,
            activation=get_activation(hidden_act),
            kernel_initializer=init,
            dtype=policy,
            name="intermediate",
        )
        self.output_dense = keras.layers.Dense(
            hidden_size, kernel_initializer=init, dtype=policy, name="output"
        )
        self.output_layer_norm = keras.layers.LayerNormalization(
            epsilon=LAYER_NORM_EPSILON, dtype=policy, name="output_layer_norm"
        )
        self.dropout = keras.layers.Dropout(hidden_dropout_prob, dtype=policy)

    def build(self, hidden_shape, mask_adder_shape=None) -> None:
        hidden_shape = tuple(hidden_shape)
        intermediate_shape = hidden_shape[:-1] + (self.intermediate_size,)
        self.attention_self.build(hidden_shape)
        self.attention_output.build(hidden_shape)
        self.attention_layer_norm.build(hidden_shape)
        self.intermediate.build(hidden_shape)
        self.output_dense.build(intermediate_shape)
        self.output_layer_norm.build(hidden_shape)

    def call(self, hidden, mask_adder, training=None):
        # hidden: [B, S, H]. The dense layers and LayerNorms see the tokens as rows, [B*S, H]:
        # a 2-D product with its bias (and the residual after it) is one fused op on CPUs
        # (oneDNN), where a 3-D input makes a tensordot, its reshapes and separate adds.
        batch, seq = ops.shape(hidden)[0], ops.shape(hidden)[1]
        rows = ops.reshape(hidden, (-1, self.hidden_size))  # [B*S, H]
        context = self.attention_self(hidden, mask_adder, training=training)  # [B, S, H]
        context = ops.reshape(context, (-1, self.hidden_size))  # [B*S, H]
        attended = self.dropout(self.attention_output(context), training=training)
        attended = self.attention_layer_norm(attended + rows)  # [B*S, H]
        inner = self.intermediate(attended)  # [B*S, I]
        out = self.dropout(self.output_dense(inner), training=training)  # [B*S, H]
        out = self.output_layer_norm(out + attended)
        return ops.reshape(out, (batch, seq, self.hidden_size))

    def compute_output_shape(self, hidden_shape, mask_adder_shape=None):
        return tuple(hidden_shape)
