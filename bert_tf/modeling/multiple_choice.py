"""`BertMultipleChoice`: the encoder scoring each of C choices, as the paper fine-tunes BERT on
SWAG (Sec. 4.4): "we construct four input sequences, each containing the concatenation of the
given sentence (sentence A) and a possible continuation (sentence B). The only task-specific
parameters introduced is a vector whose dot product with the [CLS] token representation C
denotes a score for each choice which is normalized with a softmax layer."
"""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.config import BertConfig
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import ClassifierHead
from bert_tf.modeling.task_model import CLASSIFIER_DROPOUT, CLASSIFIER_HF_NAMES, BertTaskModel

INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")


@keras.saving.register_keras_serializable(package="bert_tf")
class ChoicesToBatch(keras.layers.Layer):
    """[B, C, S] -> [B * C, S]: each choice becomes one sequence of the encoder's batch (the
    sequence length is only known when the model runs, so this cannot be a `Reshape`)."""

    def call(self, inputs):
        return ops.reshape(inputs, (-1, ops.shape(inputs)[-1]))

    def compute_output_shape(self, input_shape):
        batch, choices, seq_length = input_shape
        return (None if batch is None or choices is None else batch * choices, seq_length)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertMultipleChoice(BertTaskModel):
    """Encoder + a `ClassifierHead` with one output (dropout 0.1, then the vector
    `output_weights` [1, H] and `output_bias` [1]) on each choice's pooled [CLS] vector.

    Shapes: B = batch (examples), C = num_choices, S = sequence, H = hidden.

    Inputs (a dict): `input_ids`, `input_mask`, `segment_ids` [B, C, S] int32: choice c of
    example b is the packed `[CLS] A [SEP] B_c [SEP]`.
    Outputs (a dict): `logits` [B, C] float32 (the scores the softmax normalizes) and
    `pooled_output` [B, C, H].

    Args:
        config: the architecture.
        num_choices: C (4 for SWAG).
        encoder: an existing `BertEncoder` to put the head on (weights shared).

    Example:
        >>> config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
        ...                     num_attention_heads=4, intermediate_size=64)
        >>> model = BertMultipleChoice(config, num_choices=4)
        >>> ids = np.ones((2, 4, 8), "int32")
        >>> model({"input_ids": ids, "input_mask": ids, "segment_ids": 0 * ids})["logits"].shape
        TensorShape([2, 4])
    """

    hf_architecture = "BertForMultipleChoice"
    hf_names = CLASSIFIER_HF_NAMES

    def __init__(
        self,
        config: BertConfig,
        num_choices: int = 4,
        encoder: BertEncoder | None = None,
        **kwargs,
    ) -> None:
        encoder = encoder or BertEncoder(config)
        inputs = {
            name: keras.Input(shape=(num_choices, None), dtype="int32", name=name)
            for name in INPUT_NAMES
        }  # [B, C, S] each
        to_batch = ChoicesToBatch(name="choices_to_batch")
        flat = {name: to_batch(inputs[name]) for name in INPUT_NAMES}  # [B * C, S] each
        pooled = encoder(flat)["pooled_output"]  # [B * C, H]
        scores = ClassifierHead(
            1,
            initializer_range=config.initializer_range,
            dropout_rate=CLASSIFIER_DROPOUT,
            name="classifier",
        )(pooled)  # [B * C, 1]
        outputs = {
            # The bias adds the same to every choice, so the softmax ignores it; it is kept
            # so that the head has the classifier's variables (and checkpoint names).
            "logits": ops.reshape(scores, (-1, num_choices)),  # [B, C]
            "pooled_output": ops.reshape(pooled, (-1, num_choices, config.hidden_size)),
        }
        super().__init__(config, encoder, inputs, outputs, {"num_choices": num_choices}, **kwargs)
