"""`BertEncoder`: the BERT network as a Keras functional model built from a `BertConfig`."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.config import BertConfig
from bert_tf.modeling.attention import AttentionMask
from bert_tf.modeling.config_model import ConfigModel
from bert_tf.modeling.embeddings import BertEmbeddings, truncated_normal
from bert_tf.modeling.transformer import TransformerLayer


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEncoder(ConfigModel):
    """Embeddings, `num_hidden_layers` transformer blocks and the pooler (paper Sec. 3).

    Inputs (a dict, named as the original's features): `input_ids`, `input_mask` (1 = real
    token, 0 = padding) and `segment_ids`, each [B, S] int32.

    Outputs (a dict): `sequence_output` [B, S, H] (the last layer), `pooled_output` [B, H]
    (dense + tanh on the [CLS] position; on the last real token when causal),
    `encoder_outputs` (a list of every layer's output, [B, S, H] each) and `embedding_output`
    [B, S, H].

    Args:
        config: the architecture; with `causal_attention`, left-to-right attention (each
            position sees only itself and what precedes it), the paper's "LTR & No NSP"
            ablation (Table 5).

    Example:
        >>> config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
        ...                     num_attention_heads=4, intermediate_size=64)
        >>> encoder = BertEncoder(config)
        >>> ids = np.ones((2, 8), "int32")
        >>> out = encoder({"input_ids": ids, "input_mask": ids, "segment_ids": 0 * ids})
        >>> out["sequence_output"].shape
        TensorShape([2, 8, 32])
    """

    hf_architecture = "BertModel"
    hf_names = {
        "bert/embeddings/word_embeddings": "embeddings.word_embeddings.weight",
        "bert/embeddings/token_type_embeddings": "embeddings.token_type_embeddings.weight",
        "bert/embeddings/position_embeddings": "embeddings.position_embeddings.weight",
    }

    def __init__(self, config: BertConfig, **kwargs) -> None:
        inputs = {
            name: keras.Input(shape=(None,), dtype="int32", name=name)
            for name in ("input_ids", "input_mask", "segment_ids")
        }
        embeddings = BertEmbeddings(
            vocab_size=config.vocab_size,
            hidden_size=config.hidden_size,
            type_vocab_size=config.type_vocab_size,
            max_position_embeddings=config.max_position_embeddings,
            dropout_rate=config.hidden_dropout_prob,
            initializer_range=config.initializer_range,
            name="embeddings",
        )
        embedding_output = embeddings(inputs["input_ids"], inputs["segment_ids"])  # [B, S, H]
        mask_adder = AttentionMask(config.causal_attention, name="attention_mask")(
            inputs["input_mask"]
        )  # [B, 1, 1 or S, S]

        hidden = embedding_output
        encoder_outputs = []
        for i in range(config.num_hidden_layers):
            hidden = TransformerLayer(
                hidden_size=config.hidden_size,
                num_attention_heads=config.num_attention_heads,
                intermediate_size=config.intermediate_size,
                hidden_act=config.hidden_act,
                hidden_dropout_prob=config.hidden_dropout_prob,
                attention_probs_dropout_prob=config.attention_probs_dropout_prob,
                initializer_range=config.initializer_range,
                name=f"layer_{i}",
            )(hidden, mask_adder)  # [B, S, H]
            encoder_outputs.append(hidden)

        pooled_output = _pooler(hidden, inputs["input_mask"], config)  # [B, H]

        super().__init__(
            config,
            inputs,
            {
                "sequence_output": hidden,
                "pooled_output": pooled_output,
                "encoder_outputs": encoder_outputs,
                "embedding_output": embedding_output,
            },
            **kwargs,
        )

    def head_variables(self) -> list[keras.Variable]:
        return []

    def encoder_variable_names(self) -> dict[str, keras.Variable]:
        return self.original_variable_names()

    def original_variable_names(self) -> dict[str, keras.Variable]:
        """The `bert/` variables by the original's names. Our layers keep the original's
        layouts (Dense kernels [in, out]), so no value is transposed on the way in or out."""
        emb = self.embeddings
        names = {
            "bert/embeddings/word_embeddings": emb.word_embeddings,
            "bert/embeddings/token_type_embeddings": emb.token_type_embeddings,
            "bert/embeddings/position_embeddings": emb.position_embeddings,
            "bert/embeddings/LayerNorm/gamma": emb.layer_norm.gamma,
            "bert/embeddings/LayerNorm/beta": emb.layer_norm.beta,
        }
        for i, layer in enumerate(self.transformer_layers):
            scope = f"bert/encoder/layer_{i}"
            for dense, tf1_name in (
                (layer.attention_self.query, "attention/self/query"),
                (layer.attention_self.key, "attention/self/key"),
                (layer.attention_self.value, "attention/self/value"),
                (layer.attention_output, "attention/output/dense"),
                (layer.intermediate, "intermediate/dense"),
                (layer.output_dense, "output/dense"),
            ):
                names[f"{scope}/{tf1_name}/kernel"] = dense.kernel
                names[f"{scope}/{tf1_name}/bias"] = dense.bias
            for norm, tf1_name in (
                (layer.attention_layer_norm, "attention/output/LayerNorm"),
                (layer.output_layer_norm, "output/LayerNorm"),
            ):
                names[f"{scope}/{tf1_name}/gamma"] = norm.gamma
                names[f"{scope}/{tf1_name}/beta"] = norm.beta
        names["bert/pooler/dense/kernel"] = self.pooler.kernel
        names["bert/pooler/dense/bias"] = self.pooler.bias
        return names

    @property
    def embeddings(self) -> BertEmbeddings:
        return self.get_layer("embeddings")

    @property
    def transformer_layers(self) -> list[TransformerLayer]:
        return [self.get_layer(f"layer_{i}") for i in range(self.config.num_hidden_layers)]

    @property
    def pooler(self) -> keras.layers.Dense:
        return self.get_layer("pooler")


def _pooler(hidden, input_mask, config: BertConfig):
    """The pooler: the [CLS] vector through dense + tanh, the input of sentence-level heads.

    Under causal attention [CLS] sees only itself, the same for every input; the last real
    token is the one that has seen it all, and left-to-right models classify from it, as
    OpenAI GPT does (paper Table 5's LTR model is fine-tuned on sentence tasks).
    hidden: [B, S, H], input_mask: [B, S] -> [B, H].
    """
    summary = (
        LastRealToken(name="last_real_token")(hidden, input_mask)
        if config.causal_attention
        else hidden[:, 0]
    )  # [B, H]
    return keras.layers.Dense(
        config.hidden_size,
        activation="tanh",
        kernel_initializer=truncated_normal(config.initializer_range),
        name="pooler",
    )(summary)


@keras.saving.register_keras_serializable(package="bert_tf")
class LastRealToken(keras.layers.Layer):
    """sequence [B, S, H], input_mask [B, S] (real tokens first) -> [B, H]: the vector at each
    sequence's last real position."""

    def call(self, sequence, input_mask):
        last = ops.maximum(ops.sum(ops.cast(input_mask, "int32"), axis=1) - 1, 0)  # [B]
        batch, hidden = ops.shape(sequence)[0], ops.shape(sequence)[2]
        index = ops.broadcast_to(last[:, None, None], (batch, 1, hidden))  # [B, 1, H]
        return ops.take_along_axis(sequence, index, axis=1)[:, 0]  # [B, H]

    def compute_output_shape(self, sequence_shape, input_mask_shape):
        return (sequence_shape[0], sequence_shape[2])
