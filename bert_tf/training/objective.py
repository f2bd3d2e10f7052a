"""What the training loop asks of an objective (pre-training's or a fine-tuning task's), and the
softmax cross-entropy they all compute.

An objective splits its losses into *sums* over examples (what a slice of the batch
contributes) and *counts* (the normalisers, from the features alone), so that the training
loop can normalise by the counts of the whole global batch: the loss, its gradient and the
metrics are then those of the original on one device, however the batch is split across
replicas and accumulation steps. Every loss is linear in the sums, which makes this exact.
"""

from __future__ import annotations

from typing import Protocol

import keras
from keras import ops

from bert_tf.config import BertConfig


class Objective(Protocol):
    """The model an objective trains and what it minimises, in sums and counts."""

    sum_names: tuple[str, ...]  # the keys of `sums`
    count_names: tuple[str, ...]  # the keys of `counts`

    def build_model(self, config: BertConfig) -> keras.Model:
        """The model, outputs a dict (what `sums` reads)."""

    def trainable_variables(self, model: keras.Model) -> list:
        """The variables the loss reaches (as the original's optimizer, which skips variables
        without a gradient: unused ones are neither trained nor decayed)."""

    def model_inputs(self, features: dict) -> dict:
        """The model's inputs among a batch's features."""

    def prepare(self, features: dict) -> dict:
        """Per-batch rewriting of the records' features before the model sees them."""

    def counts(self, features: dict) -> dict:
        """The normalisers of the batch slice, from its features alone."""

    def sums(self, outputs: dict, features: dict) -> dict:
        """The batch slice's summed losses and correct predictions."""

    def loss(self, sums: dict, counts: dict):
        """The scalar to minimise, from the global batch's sums and counts."""

    def metrics(self, sums: dict, counts: dict) -> dict:
        """What is logged and evaluated: `loss` and the sums made means."""


def cross_entropy(logits_or_log_probs, labels, log_softmax: bool = True):
    """Softmax cross-entropy and 0/1 correct: [..., K] and labels [...] -> two [...] tensors.

    As the original: -sum(one_hot * log_probs). Its gradient is dense and cheap; a gather's
    gradient scatters into a zero [..., K] tensor (the slowest op of a small model's step).
    `log_softmax=False`: the input is already log-probabilities.
    """
    labels = ops.cast(labels, "int32")
    log_probs = (
        ops.log_softmax(logits_or_log_probs, axis=-1) if log_softmax else logits_or_log_probs
    )
    one_hot = ops.one_hot(labels, ops.shape(log_probs)[-1], dtype=log_probs.dtype)
    nll = -ops.sum(one_hot * log_probs, axis=-1)
    correct = ops.cast(ops.argmax(log_probs, axis=-1) == labels, "float32")
    return nll, correct


def unused_variables_removed(model: keras.Model, *unused: keras.layers.Layer) -> list:
    """The model's trainable variables but those of the `unused` layers (which the loss does
    not reach, so the original neither trains nor decays them)."""
    skip = {id(v) for layer in unused for v in layer.trainable_variables}
    return [v for v in model.trainable_variables if id(v) not in skip]


class FineTuningObjective:
    """What the fine-tuning objectives share: the encoder's inputs, no per-batch rewriting,
    and one normaliser (`count_name`: examples, windows or words): `loss` is the summed
    loss over it, and each metric a sum over it."""

    count_name = ""
    sum_names: tuple[str, ...] = ("loss",)

    @property
    def count_names(self) -> tuple[str, ...]:
        return (self.count_name,)

    def trainable_variables(self, model: keras.Model) -> list:
        return list(model.trainable_variables)

    def model_inputs(self, features: dict) -> dict:
        return {name: features[name] for name in ("input_ids", "input_mask", "segment_ids")}

    def prepare(self, features: dict) -> dict:
        return features

    def loss(self, sums: dict, counts: dict):
        return sums["loss"] / ops.maximum(counts[self.count_name], 1.0)

    def metrics(self, sums: dict, counts: dict) -> dict:
        count = ops.maximum(counts[self.count_name], 1.0)
        return {name: sums[name] / count for name in self.sum_names}
