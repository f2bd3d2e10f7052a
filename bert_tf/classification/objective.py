"""The fine-tuning loss of run_classifier.py, in the training loop's sums-and-counts form
(see pretraining/objectives.py): softmax cross-entropy over the labels, or mean squared error
for a regression task (STS-B, which the original does not have)."""

from __future__ import annotations

from keras import ops

from bert_tf.config import BertConfig
from bert_tf.modeling.classifier import BertClassifier


class Classification:
    """Mean over the batch's real examples of the per-example loss (as the original's
    `tf.reduce_mean(per_example_loss)`; padding examples, `is_real_example` 0, count for
    nothing)."""

    count_names = ("examples",)

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
            unused = {id(v) for v in model.encoder.pooler.trainable_variables}
            return [v for v in model.trainable_variables if id(v) not in unused]
        return list(model.trainable_variables)

    def model_inputs(self, features: dict) -> dict:
        return {name: features[name] for name in ("input_ids", "input_mask", "segment_ids")}

    def prepare(self, features: dict) -> dict:
        return features

    def counts(self, features: dict) -> dict:
        return {"examples": ops.sum(_real(features))}

    def sums(self, outputs: dict, features: dict) -> dict:
        logits = outputs["logits"]  # [B, num_labels]
        real = _real(features)  # [B]
        if self.regression:
            error = ops.squeeze(logits, -1) - ops.cast(features["label_ids"], "float32")
            return {"loss": ops.sum(real * ops.square(error))}
        labels = ops.cast(features["label_ids"], "int32")
        log_probs = ops.log_softmax(logits, axis=-1)
        one_hot = ops.one_hot(labels, self.num_labels, dtype="float32")
        nll = -ops.sum(one_hot * log_probs, axis=-1)  # [B]
        correct = ops.cast(ops.argmax(logits, axis=-1) == labels, "float32")
        return {"loss": ops.sum(real * nll), "accuracy": ops.sum(real * correct)}

    def loss(self, sums: dict, counts: dict):
        return sums["loss"] / ops.maximum(counts["examples"], 1.0)

    def metrics(self, sums: dict, counts: dict) -> dict:
        examples = ops.maximum(counts["examples"], 1.0)
        return {name: sums[name] / examples for name in self.sum_names}


def _real(features: dict):
    return ops.cast(features["is_real_example"], "float32")
