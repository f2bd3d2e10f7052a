"""The pre-training heads of paper Sec. 3.1, as the original's run_pretraining (their loss is
`bert_tf.pretraining.objectives`'), and the classifier head of fine-tuning.

- `MaskedLMHead` (`cls/predictions`): gather the hidden vectors at `masked_lm_positions`,
  dense + hidden_act + LayerNorm, then the tied word-embedding decoder plus an output bias.
- `NextSentenceHead` (`cls/seq_relationship`): a 2-way classifier on the pooled output; label
  0 = IsNext, 1 = random next sentence.
"""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.embeddings import LAYER_NORM_EPSILON, BertEmbeddings, truncated_normal


def gather_indexes(sequence, positions):
    """Picks `sequence[b, positions[b, p]]`: [B, S, H] and [B, P] -> [B, P, H].

    In 16-bit compute as a one-hot [B, P, S] matmul: a gather's gradient is a scatter, slow on
    GPUs; one product by 1 and the rest by 0 is exact, and 2*P*S*H FLOPs a sequence are under
    0.01% of BERT-Base's step. In float32 a gather (a float32 matmul may round to TF32).
    """
    positions = ops.cast(positions, "int32")
    dtype = keras.backend.standardize_dtype(sequence.dtype)
    if dtype == "float32":
        return ops.take_along_axis(sequence, positions[:, :, None], axis=1)
    one_hot = ops.one_hot(positions, ops.shape(sequence)[1], dtype=dtype)  # [B, P, S]
    return ops.matmul(one_hot, sequence)


class MaskedLMHead(keras.layers.Layer):
    """Log-probabilities over the vocabulary at each masked position.

    The decoder is the encoder's word-embedding table (shared, not copied), so the head owns
    only its transform and `output_bias`.

    Shapes: B = batch, S = sequence, P = max_predictions_per_seq, H = hidden, V = vocab.
    """

    def __init__(
        self,
        embeddings: BertEmbeddings,
        hidden_act: str,
        initializer_range: float,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.embeddings = embeddings
        self.hidden_act = hidden_act
        self.initializer_range = initializer_range
        self.transform = keras.layers.Dense(
            embeddings.hidden_size,
            activation=get_activation(hidden_act),
            kernel_initializer=truncated_normal(initializer_range),
            dtype=self.dtype_policy,
            name="transform",
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=LAYER_NORM_EPSILON, dtype=self.dtype_policy, name="transform_layer_norm"
        )

    def build(self, sequence_output_shape, masked_lm_positions_shape=None) -> None:
        hidden_shape = (None, self.embeddings.hidden_size)
        self.transform.build(hidden_shape)
        self.layer_norm.build(hidden_shape)
        self.output_bias = self.add_weight(
            shape=(self.embeddings.vocab_size,), initializer="zeros", name="output_bias"
        )

    def call(self, sequence_output, masked_lm_positions):
        # sequence_output: [B, S, H]; masked_lm_positions: [B, P]
        hidden = gather_indexes(sequence_output, masked_lm_positions)  # [B, P, H]
        hidden = self.layer_norm(self.transform(hidden))  # [B, P, H]
        table = ops.cast(self.embeddings.word_embeddings, self.compute_dtype)  # [V, H]
        logits = ops.matmul(hidden, ops.transpose(table)) + ops.cast(
            self.output_bias, self.compute_dtype
        )  # [B, P, V]
        return ops.log_softmax(ops.cast(logits, "float32"), axis=-1)

    def compute_output_shape(self, sequence_output_shape, masked_lm_positions_shape=None):
        return tuple(masked_lm_positions_shape) + (self.embeddings.vocab_size,)

    def get_config(self) -> dict:
        # The shared embeddings layer is wired by the owning model, not serialized here.
        raise NotImplementedError("MaskedLMHead is rebuilt by BertPretrainer.from_config")


@keras.saving.register_keras_serializable(package="bert_tf")
class ClassifierHead(keras.layers.Layer):
    """`dropout(pooled_output) @ output_weights^T + output_bias`: [B, H] -> [B, num_classes]
    logits (float32), as the original's run_classifier `create_model`. It applies to every
    position of a sequence output too ([B, S, H] -> [B, S, num_classes]: the SQuAD head).

    `output_weights` keeps the original's [num_classes, H] layout (the transpose of a Dense
    kernel), so checkpoints load without transposing. The original fine-tunes with dropout
    0.1 (keep_prob 0.9, fixed, whatever the config says).
    """

    def __init__(
        self, num_classes: int, initializer_range: float, dropout_rate: float = 0.0, **kwargs
    ) -> None:
        super().__init__(**kwargs)
        self.num_classes = num_classes
        self.initializer_range = initializer_range
        self.dropout_rate = dropout_rate
        self.dropout = keras.layers.Dropout(dropout_rate) if dropout_rate else None
        # Per position, so a mask (of an LSTM's output) stays valid through it.
        self.supports_masking = True

    def build(self, pooled_shape) -> None:
        self.output_weights = self.add_weight(
            shape=(self.num_classes, pooled_shape[-1]),
            initializer=truncated_normal(self.initializer_range),
            name="output_weights",
        )
        self.output_bias = self.add_weight(
            shape=(self.num_classes,), initializer="zeros", name="output_bias"
        )

    def call(self, pooled_output, training=None):
        # pooled_output: [B, H] (or [B, S, H])
        if self.dropout is not None:
            pooled_output = self.dropout(pooled_output, training=training)
        weights = ops.cast(self.output_weights, self.compute_dtype)  # [C, H]
        logits = ops.matmul(pooled_output, ops.transpose(weights))  # [B, C] (or [B, S, C])
        logits = logits + ops.cast(self.output_bias, self.compute_dtype)
        return ops.cast(logits, "float32")

    def compute_output_shape(self, pooled_shape):
        return (*pooled_shape[:-1], self.num_classes)


@keras.saving.register_keras_serializable(package="bert_tf")
class NextSentenceHead(ClassifierHead):
    """`log_softmax(pooled_output @ output_weights^T + output_bias)`: [B, H] -> [B, 2]
    (`cls/seq_relationship`; no dropout, as the original)."""

    def __init__(self, initializer_range: float, num_classes: int = 2, **kwargs) -> None:
        kwargs.pop("dropout_rate", None)
        super().__init__(num_classes, initializer_range, **kwargs)

    def call(self, pooled_output, training=None):
        return ops.log_softmax(super().call(pooled_output), axis=-1)
