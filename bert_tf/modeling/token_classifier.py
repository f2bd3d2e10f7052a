"""`BertTokenClassifier`: the encoder with a label classifier at every position, for NER
(paper Sec. 5.3, Table 7), fine-tuned or feature-based.

- Fine-tuning (`feature_based=None`): dropout 0.1, then `ClassifierHead(num_labels)` on each
  position of the last layer, as the paper: "we feed the final hidden representation of each
  token into a classification layer over the NER label set".
- Feature-based (Sec. 5.3, the second half of Table 7): BERT is frozen (no parameter is
  fine-tuned, no dropout in it); the activations named by `feature_based` feed "a randomly
  initialized two-layer 768-dimensional BiLSTM before the classification layer".
"""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.config import FEATURES, BertConfig
from bert_tf.errors import InputError
from bert_tf.modeling.bilstm import bilstm
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import ClassifierHead
from bert_tf.modeling.task_model import CLASSIFIER_DROPOUT, CLASSIFIER_HF_NAMES, BertTaskModel


@keras.saving.register_keras_serializable(package="bert_tf")
class ScalarMix(keras.layers.Layer):
    """`gamma * sum_k softmax(s)_k * layer_k`: a learned weighted sum of layers (as ELMo
    mixes its layers; the paper's "weighted sum" rows). [B, S, H] x K -> [B, S, H]."""

    def build(self, shapes) -> None:
        self.scalars = self.add_weight(shape=(len(shapes),), initializer="zeros", name="scalars")
        self.gamma = self.add_weight(shape=(), initializer="ones", name="gamma")

    def call(self, layers):
        weights = ops.cast(ops.softmax(self.scalars), self.compute_dtype)  # [K]
        mixed = sum(weights[k] * layer for k, layer in enumerate(layers))
        return ops.cast(self.gamma, self.compute_dtype) * mixed

    def compute_output_shape(self, shapes):
        return shapes[0]


class InferenceMode(keras.layers.Layer):
    """Calls `model` with training=False whatever the caller's mode (a functional model
    passes its own `training` on to the layers it calls)."""

    def __init__(self, model: keras.Model, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model = model

    def call(self, inputs):
        return self.model(inputs, training=False)

    def compute_output_spec(self, inputs):
        return self.model.compute_output_spec(inputs)


def bert_features(outputs: dict, feature: str, mix_name: str = "scalar_mix"):
    """The frozen encoder's activations that `feature` names: [B, S, H] ([B, S, 4H] for the
    concatenation)."""
    layers = outputs["encoder_outputs"]
    if "last_four" in feature and len(layers) < 4:
        raise InputError(
            f"feature_based={feature} needs at least 4 layers; the model has {len(layers)}"
        )
    if feature == "embeddings":
        return outputs["embedding_output"]
    if feature == "second_to_last_hidden":
        return layers[-2]
    if feature == "last_hidden":
        return layers[-1]
    if feature == "weighted_sum_last_four_hidden":
        return ScalarMix(name=mix_name)(layers[-4:])
    if feature == "concat_last_four_hidden":
        return ops.concatenate(layers[-4:], axis=-1)
    if feature == "weighted_sum_all_layers":
        return ScalarMix(name=mix_name)(layers)
    raise ValueError(f"feature_based={feature!r}; expected one of {', '.join(FEATURES)}")


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTokenClassifier(BertTaskModel):
    """Encoder + a label classifier at every position.

    Inputs (a dict): `input_ids`, `input_mask`, `segment_ids` [B, S] int32.
    Outputs (a dict): the encoder's outputs plus `logits` [B, S, num_labels] float32.

    Args:
        config: the architecture.
        num_labels: the NER labels (O, B-/I- per type).
        feature_based: None to fine-tune, or one of `FEATURES` to train a BiLSTM on those
            frozen activations.
        lstm_units: each direction's size in the feature-based BiLSTM (768 in the paper).
        encoder: an existing `BertEncoder` to build on (weights shared).
    """

    hf_architecture = "BertForTokenClassification"
    hf_names = CLASSIFIER_HF_NAMES
    hf_pooler = False

    def __init__(
        self,
        config: BertConfig,
        num_labels: int,
        feature_based: str | None = None,
        lstm_units: int = 768,
        encoder: BertEncoder | None = None,
        **kwargs,
    ) -> None:
        encoder = encoder or BertEncoder(config)
        inputs = dict(encoder.input)
        if feature_based is None:
            outputs = dict(encoder(inputs))
            hidden = outputs["sequence_output"]  # [B, S, H]
        else:
            # Frozen activations: BERT runs in inference mode (no dropout) and is not trained.
            encoder.trainable = False
            outputs = dict(InferenceMode(encoder, name="frozen_bert")(inputs))
            hidden = bert_features(outputs, feature_based)  # [B, S, H or 4H]
            hidden = bilstm(hidden, inputs["input_mask"], lstm_units, num_layers=2)
            # hidden: [B, S, 2 * lstm_units]
        outputs["logits"] = ClassifierHead(
            num_labels,
            initializer_range=config.initializer_range,
            dropout_rate=CLASSIFIER_DROPOUT,
            name="classifier",
        )(hidden)  # [B, S, num_labels]
        settings = {
            "num_labels": num_labels,
            "feature_based": feature_based,
            "lstm_units": lstm_units,
        }
        super().__init__(config, encoder, inputs, outputs, settings, **kwargs)

    @classmethod
    def head_arguments(cls, output_weights_shape: list[int]) -> dict:
        return {"num_labels": output_weights_shape[0]}  # [num_labels, H]
