"""`BertSpanLabeler`: the encoder with the SQuAD span head, as the original's run_squad.py
fine-tunes it (paper Sec. 4.2): a start vector S and an end vector E (`cls/squad/
output_weights` [2, H], and `output_bias` [2]) score every token; the span i..j scores
S.T_i + E.T_j."""

from __future__ import annotations

import keras
from keras import ops

from bert_tf.config import BertConfig
from bert_tf.modeling.bilstm import bilstm
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import ClassifierHead
from bert_tf.modeling.task_model import BertTaskModel, encoder_graph


@keras.saving.register_keras_serializable(package="bert_tf")
class BertSpanLabeler(BertTaskModel):
    """Encoder + a 2-way `ClassifierHead` at every position (no dropout on the head, as the
    original).

    Inputs (a dict): `input_ids`, `input_mask`, `segment_ids` [B, S] int32.
    Outputs (a dict): the encoder's outputs plus `start_logits` and `end_logits` [B, S]
    float32 (padding positions included, as the original's softmax over all S positions).

    Args:
        config: the architecture.
        bilstm_units: paper Table 5's "+ BiLSTM": a randomly initialised BiLSTM of this many
            units per direction between the sequence output and the span head. None: the
            original's model.
        encoder: an existing `BertEncoder` to put the head on (weights shared).
    """

    head_scope = "cls/squad/"  # run_squad's
    hf_architecture = "BertForQuestionAnswering"
    hf_names = {
        **BertEncoder.hf_names,
        "cls/squad/output_weights": "qa_outputs.weight",
        "cls/squad/output_bias": "qa_outputs.bias",
    }
    hf_pooler = False
    original_head = "cls/squad/output_weights"

    def __init__(
        self,
        config: BertConfig,
        bilstm_units: int | None = None,
        encoder: BertEncoder | None = None,
        **kwargs,
    ) -> None:
        encoder, inputs, outputs = encoder_graph(config, encoder)
        hidden = outputs["sequence_output"]  # [B, S, H]
        if bilstm_units:
            hidden = bilstm(hidden, inputs["input_mask"], bilstm_units)  # [B, S, 2 * units]
        logits = ClassifierHead(2, initializer_range=config.initializer_range, name="squad")(
            hidden
        )  # [B, S, 2]
        outputs["start_logits"] = ops.take(logits, 0, axis=-1)  # [B, S]
        outputs["end_logits"] = ops.take(logits, 1, axis=-1)  # [B, S]
        settings = {"bilstm_units": bilstm_units}
        super().__init__(config, encoder, inputs, outputs, settings, **kwargs)
