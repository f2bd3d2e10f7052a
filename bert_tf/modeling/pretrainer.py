"""`BertPretrainer`: the encoder with both pre-training heads, as the original run_pretraining."""

from __future__ import annotations

import keras

from bert_tf.config import BertConfig
from bert_tf.modeling.config_model import ConfigModel
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import MaskedLMHead, NextSentenceHead


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPretrainer(ConfigModel):
    """Encoder + masked-LM head + next-sentence head.

    Inputs (a dict): `input_ids`, `input_mask`, `segment_ids` [B, S] and `masked_lm_positions`
    [B, P], int32 (the features of the pre-training TFRecords).

    Outputs (a dict): the encoder's outputs plus `mlm_log_probs` [B, P, V] and
    `nsp_log_probs` [B, 2] (`bert_tf.pretraining.objectives.pretraining_loss` turns them into
    the paper's loss).

    Args:
        config: the architecture.
        encoder: an existing `BertEncoder` to put the heads on (its weights are shared);
            by default a new one is built from `config`.
    """

    hf_architecture = "BertForPreTraining"
    hf_names = {
        **BertEncoder.hf_names,
        "cls/predictions/output_bias": "cls.predictions.bias",
        "cls/seq_relationship/output_weights": "cls.seq_relationship.weight",
        "cls/seq_relationship/output_bias": "cls.seq_relationship.bias",
    }
    original_head = "cls/seq_relationship/output_weights"

    def __init__(self, config: BertConfig, encoder: BertEncoder | None = None, **kwargs) -> None:
        encoder = encoder or BertEncoder(config)
        inputs = dict(encoder.input)
        inputs["masked_lm_positions"] = keras.Input(
            shape=(None,), dtype="int32", name="masked_lm_positions"
        )
        outputs = dict(encoder({name: inputs[name] for name in encoder.input}))
        outputs["mlm_log_probs"] = MaskedLMHead(
            encoder.embeddings,
            hidden_act=config.hidden_act,
            initializer_range=config.initializer_range,
            name="cls_predictions",
        )(outputs["sequence_output"], inputs["masked_lm_positions"])
        outputs["nsp_log_probs"] = NextSentenceHead(
            initializer_range=config.initializer_range, name="cls_seq_relationship"
        )(outputs["pooled_output"])
        super().__init__(config, inputs, outputs, **kwargs)
        self.encoder = encoder

    def original_variable_names(self) -> dict[str, keras.Variable]:
        mlm, nsp = self.masked_lm_head, self.next_sentence_head
        # The MLM decoder is bert/embeddings/word_embeddings itself (tied): no entry here.
        return {
            **self.encoder_variable_names(),
            "cls/predictions/transform/dense/kernel": mlm.transform.kernel,
            "cls/predictions/transform/dense/bias": mlm.transform.bias,
            "cls/predictions/transform/LayerNorm/gamma": mlm.layer_norm.gamma,
            "cls/predictions/transform/LayerNorm/beta": mlm.layer_norm.beta,
            "cls/predictions/output_bias": mlm.output_bias,
            "cls/seq_relationship/output_weights": nsp.output_weights,
            "cls/seq_relationship/output_bias": nsp.output_bias,
        }

    @property
    def masked_lm_head(self) -> MaskedLMHead:
        return self.get_layer("cls_predictions")

    @property
    def next_sentence_head(self) -> NextSentenceHead:
        return self.get_layer("cls_seq_relationship")
