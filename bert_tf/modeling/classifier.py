"""`BertClassifier`: the encoder with a classifier on the pooled output, as the original's
run_classifier.py fine-tunes it (paper Sec. 4.1)."""

from __future__ import annotations

import keras

from bert_tf.config import BertConfig
from bert_tf.modeling.bilstm import bilstm
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import ClassifierHead
from bert_tf.modeling.task_model import (
    CLASSIFIER_DROPOUT,
    CLASSIFIER_HF_NAMES,
    BertTaskModel,
    encoder_graph,
)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertClassifier(BertTaskModel):
    """Encoder + `ClassifierHead` (dropout 0.1, then [num_labels, H] weights).

    Inputs (a dict): `input_ids`, `input_mask`, `segment_ids` [B, S] int32.
    Outputs (a dict): the encoder's outputs plus `logits` [B, num_labels] float32. With
    `num_labels` 1 the single logit is a regression output (STS-B).

    Args:
        config: the architecture.
        num_labels: classes (1 for regression).
        bilstm_units: paper Table 5's "+ BiLSTM": classify from a randomly initialised BiLSTM
            of this many units per direction over the sequence output (its two final states)
            instead of the pooled output. None: the original's classifier.
        encoder: an existing `BertEncoder` to put the classifier on (weights shared).
    """

    hf_architecture = "BertForSequenceClassification"
    hf_names = CLASSIFIER_HF_NAMES
    original_head = "output_weights"  # the original's run_classifier

    def __init__(
        self,
        config: BertConfig,
        num_labels: int,
        bilstm_units: int | None = None,
        encoder: BertEncoder | None = None,
        **kwargs,
    ) -> None:
        encoder, inputs, outputs = encoder_graph(config, encoder)
        summary = outputs["pooled_output"]  # [B, H]
        if bilstm_units:
            summary = bilstm(
                outputs["sequence_output"], inputs["input_mask"], bilstm_units, summary=True
            )  # [B, 2 * bilstm_units]
        outputs["logits"] = ClassifierHead(
            num_labels,
            initializer_range=config.initializer_range,
            dropout_rate=CLASSIFIER_DROPOUT,
            name="classifier",
        )(summary)
        settings = {"num_labels": num_labels, "bilstm_units": bilstm_units}
        super().__init__(config, encoder, inputs, outputs, settings, **kwargs)

    @classmethod
    def head_arguments(cls, output_weights_shape: list[int]) -> dict:
        return {"num_labels": output_weights_shape[0]}  # [num_labels, H]
