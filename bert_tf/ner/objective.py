"""The NER loss, in the training loop's sums-and-counts form (see pretraining/objectives.py),
and the records it reads."""

from __future__ import annotations

import tensorflow as tf
from keras import ops

from bert_tf.config import BertConfig
from bert_tf.input_pipeline import record_dataset
from bert_tf.modeling.token_classifier import BertTokenClassifier
from bert_tf.ner.features import RECORD_NAMES


def ner_dataset(
    input_file: str, max_seq_length: int, batch_size: int, is_training: bool, seed=None
) -> tf.data.Dataset:
    """Batches of {input_ids, input_mask, segment_ids, label_ids, label_mask} [B, S] int32
    (plus example_index [B] for evaluation and prediction)."""
    spec = {name: tf.io.FixedLenFeature([max_seq_length], tf.int64) for name in RECORD_NAMES}
    return record_dataset(input_file, spec, batch_size, is_training, seed)


class TokenClassification:
    """Mean over the batch's labelled words (each word's first piece, in the window where it
    has most context) of the softmax cross-entropy over the labels; other positions carry
    no label and no loss (paper Sec. 5.3).

    Args:
        num_labels: the label set's size.
        feature_based: as `BertTokenClassifier`'s: None fine-tunes BERT; a feature name
            trains only the BiLSTM and the classifier on frozen BERT.
        lstm_units: the feature-based BiLSTM's size per direction.
    """

    count_names = ("words",)
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
        # The pooler gets no gradient from a token loss: as the original's optimizer skips
        # variables without a gradient, it is neither trained nor decayed. (Frozen BERT,
        # feature-based, has no trainable variable at all.)
        unused = {id(v) for v in model.encoder.pooler.trainable_variables}
        return [v for v in model.trainable_variables if id(v) not in unused]

    def model_inputs(self, features: dict) -> dict:
        return {name: features[name] for name in ("input_ids", "input_mask", "segment_ids")}

    def prepare(self, features: dict) -> dict:
        return features

    def counts(self, features: dict) -> dict:
        return {"words": ops.sum(ops.cast(features["label_mask"], "float32"))}

    def sums(self, outputs: dict, features: dict) -> dict:
        logits = outputs["logits"]  # [B, S, L]
        labels = ops.cast(features["label_ids"], "int32")  # [B, S]
        mask = ops.cast(features["label_mask"], "float32")  # [B, S]
        log_probs = ops.log_softmax(logits, axis=-1)
        nll = -ops.sum(ops.one_hot(labels, self.num_labels) * log_probs, axis=-1)  # [B, S]
        correct = ops.cast(ops.argmax(logits, axis=-1) == labels, "float32")
        return {"loss": ops.sum(mask * nll), "accuracy": ops.sum(mask * correct)}

    def loss(self, sums: dict, counts: dict):
        return sums["loss"] / ops.maximum(counts["words"], 1.0)

    def metrics(self, sums: dict, counts: dict) -> dict:
        words = ops.maximum(counts["words"], 1.0)
        return {name: sums[name] / words for name in self.sum_names}
