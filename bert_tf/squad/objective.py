"""The SQuAD fine-tuning loss of run_squad.py, in the training loop's sums-and-counts form
(bert_tf/training/objective.py)."""

from __future__ import annotations

from keras import ops

from bert_tf.config import BertConfig
from bert_tf.modeling.span_labeler import BertSpanLabeler
from bert_tf.training.objective import FineTuningObjective, cross_entropy, unused_variables_removed


class SpanExtraction(FineTuningObjective):
    """(start loss + end loss) / 2, each the mean over the batch of the softmax
    cross-entropy of the answer's position over all S positions (as the original:
    padding positions are not masked out; an answer outside the window is at [CLS])."""

    count_name = "features"
    sum_names = ("loss", "start_accuracy", "end_accuracy")

    def __init__(self, bilstm_units: int | None = None) -> None:
        self.bilstm_units = bilstm_units

    def build_model(self, config: BertConfig) -> BertSpanLabeler:
        return BertSpanLabeler(config, bilstm_units=self.bilstm_units)

    def trainable_variables(self, model: BertSpanLabeler) -> list:
        # The pooler gets no gradient from the span loss.
        return unused_variables_removed(model, model.encoder.pooler)

    def counts(self, features: dict) -> dict:
        return {"features": ops.cast(ops.shape(features["input_ids"])[0], "float32")}

    def sums(self, outputs: dict, features: dict) -> dict:
        sums = {"loss": 0.0}
        for end in ("start", "end"):
            # [B, S] logits, [B] positions -> [B]
            nll, correct = cross_entropy(outputs[f"{end}_logits"], features[f"{end}_positions"])
            sums["loss"] = sums["loss"] + ops.sum(nll) / 2.0
            sums[f"{end}_accuracy"] = ops.sum(correct)
        return sums
