"""The input embeddings: word + token type (segment) + position, then LayerNorm and dropout."""

from __future__ import annotations

import keras
from keras import ops

# As the original (tf.contrib.layers.layer_norm with BERT's epsilon): every LayerNorm uses 1e-12.
LAYER_NORM_EPSILON = 1e-12


def truncated_normal(stddev: float) -> keras.initializers.Initializer:
    """The original's initializer for every weight matrix (biases start at zero)."""
    return keras.initializers.TruncatedNormal(stddev=stddev)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEmbeddings(keras.layers.Layer):
    """`embedding_output = dropout(LayerNorm(word[ids] + token_type[segment_ids] + position))`.

    Holds the three tables under the original's names. The word table is also the masked-LM
    decoder (`MaskedLMHead` reads it), as the paper ties input and output embeddings.

    Shapes: B = batch, S = sequence length, H = hidden size, V = vocab size.
    """

    def __init__(
        self,
        vocab_size: int,
        hidden_size: int,
        type_vocab_size: int,
        max_position_embeddings: int,
        dropout_rate: float,
        initializer_range: float,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.type_vocab_size = type_vocab_size
        self.max_position_embeddings = max_position_embeddings
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=LAYER_NORM_EPSILON, dtype=self.dtype_policy, name="LayerNorm"
        )
        self.dropout = keras.layers.Dropout(dropout_rate, dtype=self.dtype_policy)

    def build(self, input_ids_shape, segment_ids_shape=None) -> None:
        init = truncated_normal(self.initializer_range)
        self.word_embeddings = self.add_weight(
            shape=(self.vocab_size, self.hidden_size), initializer=init, name="word_embeddings"
        )
        self.token_type_embeddings = self.add_weight(
            shape=(self.type_vocab_size, self.hidden_size),
            initializer=init,
            name="token_type_embeddings",
        )
        self.position_embeddings = self.add_weight(
            shape=(self.max_position_embeddings, self.hidden_size),
            initializer=init,
            name="position_embeddings",
        )
        self.layer_norm.build(tuple(input_ids_shape) + (self.hidden_size,))

    def call(self, input_ids, segment_ids, training=None):
        # input_ids, segment_ids: [B, S] int
        seq_length = ops.shape(input_ids)[1]
        # A gather gives the same values as the original's one-hot matmul (TPU) or gather.
        words = ops.take(self.word_embeddings, input_ids, axis=0)  # [B, S, H]
        token_types = self.token_types(segment_ids)  # [B, S, H]
        positions = self.position_embeddings[:seq_length]  # [S, H]
        x = ops.cast(words + token_types + positions[None], self.compute_dtype)
        return self.dropout(self.layer_norm(x), training=training)  # [B, S, H]

    def token_types(self, segment_ids):
        """[B, S] -> [B, S, H]: the token-type rows. In float32 a gather, exact everywhere. In
        16-bit compute, as the original a one-hot matmul ("always faster for a small
        vocabulary"): a gather's gradient scatters B*S rows into 2, which made the backward
        2.2x slower on a GPU; a row times 1 plus zeros is exact in 16 bits, where a float32
        matmul on a GPU may round to TF32."""
        if self.compute_dtype == "float32":
            return ops.take(self.token_type_embeddings, segment_ids, axis=0)
        one_hot = ops.one_hot(segment_ids, self.type_vocab_size, dtype=self.compute_dtype)
        table = ops.cast(self.token_type_embeddings, self.compute_dtype)  # [T, H]
        return ops.matmul(one_hot, table)  # [B, S, H]

    def compute_output_shape(self, input_ids_shape, segment_ids_shape=None):
        return tuple(input_ids_shape) + (self.hidden_size,)
