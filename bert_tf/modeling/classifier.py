"""`BertClassifier`: the encoder with a classifier on the pooled output, as the original's
run_classifier.py fine-tunes it (paper Sec. 4.1)."""

from __future__ import annotations

import keras

from bert_tf.config import BertConfig
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import ClassifierHead

# The original's classifier dropout: keep_prob 0.9, fixed (not the config's dropout).
CLASSIFIER_DROPOUT = 0.1


@keras.saving.register_keras_serializable(package="bert_tf")
class BertClassifier(keras.Model):
    """Encoder + `ClassifierHead` (dropout 0.1, then [num_labels, H] weights).

    Inputs (a dict): `input_ids`, `input_mask`, `segment_ids` [B, S] int32.
    Outputs (a dict): the encoder's outputs plus `logits` [B, num_labels] float32. With
    `num_labels` 1 the single logit is a regression output (STS-B).

    Args:
        config: the architecture.
        num_labels: classes (1 for regression).
        encoder: an existing `BertEncoder` to put the classifier on (weights shared).
    """

    def __init__(
        self,
        config: BertConfig,
        num_labels: int,
        encoder: BertEncoder | None = None,
        **kwargs,
    ) -> None:
        # A left-to-right pre-trained model (run_pretraining --objective=ltr) stays causal.
        encoder = encoder or BertEncoder(
            config, causal=bool(config.extra.get("causal_attention", False))
        )
        inputs = dict(encoder.input)
        outputs = dict(encoder(inputs))
        outputs["logits"] = ClassifierHead(
            num_labels,
            initializer_range=config.initializer_range,
            dropout_rate=CLASSIFIER_DROPOUT,
            name="classifier",
        )(outputs["pooled_output"])
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.config = config
        self.num_labels = num_labels
        self.encoder = encoder

    @property
    def classifier(self) -> ClassifierHead:
        return self.get_layer("classifier")

    def get_config(self) -> dict:
        return {"config": self.config.to_dict(), "num_labels": self.num_labels, "name": self.name}

    @classmethod
    def from_config(cls, config: dict) -> BertClassifier:
        config = dict(config)
        return cls(BertConfig.from_dict(config.pop("config")), **config)
