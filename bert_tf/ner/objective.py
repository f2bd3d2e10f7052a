"""The NER loss, in the training loop's sums-and-counts form (bert_tf/training/objective.py)."""

from __future__ import annotations

from keras import ops

from bert_tf.config import BertConfig
from bert_tf.modeling.token_classifier import BertTokenClassifier
from bert_tf.training.objective import FineTuningObjective, cross_entropy, unused_variables_removed


class TokenClassification(FineTuningObjective):
    """Mean over the batch's labelled words (each word's first piece, in the window where it
    has most context) of the softmax cross-entropy over the labels; other positions carry
    no label and no loss (paper Sec. 5.3).

    Args:
        num_labels: the label set's size.
        feature_based: as `BertTokenClassifier`'s: None fine-tunes BERT; a feature name
            trains only the BiLSTM and the classifier on frozen BERT.
        lstm_units: the feature-based BiLSTM's size per direction.
    """

    count_name = "words"
    sum_names = ("loss", "accuracy")

    def __init__(
        self, num_labels: int, feature_based: str | None = None, lstm_units: int = 768
    ) -> None:
        self.num_labels = num_labels
        self.feature_based = feature_based
        self.lstm_units = lstm_units

    def build_model(self, config: BertConfig) -> BertTokenClassifier:
        return BertTokenClassifier(config, self.num_labels, self.feature_based, self.lstm_units)

    def trainable_variables(self, model: BertTokenClassifier) -> list:
        # The pooler gets no gradient from a token loss. (Frozen BERT, feature-based, has no
        # trainable variable at all.)
        return unused_variables_removed(model, model.encoder.pooler)

    def counts(self, features: dict) -> dict:
        return {"words": ops.sum(ops.cast(features["label_mask"], "float32"))}

    def sums(self, outputs: dict, features: dict) -> dict:
        mask = ops.cast(features["label_mask"], "float32")  # [B, S]
        nll, correct = cross_entropy(outputs["logits"], features["label_ids"])  # [B, S] each
        return {"loss": ops.sum(mask * nll), "accuracy": ops.sum(mask * correct)}
