"""The fine-tuning loss of run_classifier.py, in the training loop's sums-and-counts form
(bert_tf/training/objective.py): softmax cross-entropy over the labels, or mean squared error
for a regression task (STS-B, which the original does not have)."""

from __future__ import annotations

from keras import ops

from bert_tf.config import BertConfig
from bert_tf.modeling.classifier import BertClassifier
from bert_tf.training.objective import FineTuningObjective, cross_entropy, unused_variables_removed


class Classification(FineTuningObjective):
    """Mean over the batch's real examples of the per-example loss (as the original's
    `tf.reduce_mean(per_example_loss)`; padding examples, `is_real_example` 0, count for
    nothing)."""

    count_name = "examples"

    def __init__(
        self, num_labels: int, regression: bool = False, bilstm_units: int | None = None
    ) -> None:
        self.num_labels = 1 if regression else num_labels
        self.regression = regression
        self.bilstm_units = bilstm_units
        self.sum_names = ("loss",) if regression else ("loss", "accuracy")

    def build_model(self, config: BertConfig) -> BertClassifier:
        return BertClassifier(config, self.num_labels, bilstm_units=self.bilstm_units)

    def trainable_variables(self, model: BertClassifier) -> list:
        if self.bilstm_units:
            # The BiLSTM takes the pooler's place: it gets no gradient, so no update or decay.
            return unused_variables_removed(model, model.encoder.pooler)
        return list(model.trainable_variables)

    def counts(self, features: dict) -> dict:
        return {"examples": ops.sum(_real(features))}

    def sums(self, outputs: dict, features: dict) -> dict:
        logits = outputs["logits"]  # [B, num_labels]
        real = _real(features)  # [B]
        if self.regression:
            error = ops.squeeze(logits, -1) - ops.cast(features["label_ids"], "float32")
            return {"loss": ops.sum(real * ops.square(error))}
        nll, correct = cross_entropy(logits, features["label_ids"])  # [B], [B]
        return {"loss": ops.sum(real * nll), "accuracy": ops.sum(real * correct)}


def _real(features: dict):
    return ops.cast(features["is_real_example"], "float32")
