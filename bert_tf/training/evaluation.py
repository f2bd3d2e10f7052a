"""Running a trained model over a dataset under its strategy: its outputs gathered in record
order (`predict`), or its objective's metrics (`evaluate`), as the original's Estimator."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.training.progress import Progress


def predict(
    trainer, dataset: tf.data.Dataset, names: tuple[str, ...], what: str = "predict"
) -> dict:
    """Runs `trainer`'s model (no dropout) over every batch of `dataset`; returns numpy arrays
    [N, ...] of the named model outputs and features, every replica's (and worker's)
    examples gathered. Batches must split evenly into the replicas. Progress lines start
    with `what`."""
    strategy, model, objective = trainer.strategy, trainer.model, trainer.objective

    def replica(features):
        features = objective.prepare(features)
        outputs = model(objective.model_inputs(features), training=False)
        return {name: outputs[name] if name in outputs else features[name] for name in names}

    @tf.function
    def step(features):
        values = strategy.run(replica, args=(features,))
        return {name: strategy.gather(value, axis=0) for name, value in values.items()}

    parts: dict = {name: [] for name in names}
    batches = int(dataset.cardinality())
    progress = Progress(what, batches if batches >= 0 else None, "batches")
    for features in progress.counted(strategy.experimental_distribute_dataset(dataset)):
        for name, value in step(features).items():
            parts[name].append(value.numpy())
    progress.finish()
    if not parts[names[0]]:
        raise InputError("prediction read no batch: the input holds no complete batch")
    return {name: np.concatenate(values) for name, values in parts.items()}


def evaluate(trainer, dataset: tf.data.Dataset, max_steps: int) -> dict:
    """`trainer`'s objective's metrics over at most `max_steps` batches of `dataset`.

    As the original's Estimator: `loss` is the mean of the batches' losses; the other
    metrics are weighted over every prediction evaluated.
    """
    strategy, model, objective = trainer.strategy, trainer.model, trainer.objective

    def replica(features: dict):
        context = tf.distribute.get_replica_context()
        features = objective.prepare(features)
        outputs = model(objective.model_inputs(features), training=False)
        sums = objective.sums(outputs, features)
        counts = objective.counts(features)
        return context.all_reduce(tf.distribute.ReduceOp.SUM, (sums, counts))

    def first(values: dict) -> dict:  # after the all-reduce every replica holds the same
        return {k: strategy.experimental_local_results(v)[0] for k, v in values.items()}

    @tf.function
    def step(features):
        sums, counts = strategy.run(replica, args=(features,))
        return first(sums), first(counts)

    totals: dict = {}
    batch_losses = []
    for features in strategy.experimental_distribute_dataset(dataset.take(max_steps)):
        sums, counts = step(features)
        batch_losses.append(float(objective.loss(sums, counts)))
        for name, value in {**sums, **counts}.items():
            totals[name] = totals.get(name, 0.0) + float(value)
    if not batch_losses:
        raise InputError(
            "evaluation read no batch: the input holds fewer records than one eval batch"
        )
    counts = {name: totals[name] for name in objective.count_names}
    sums = {name: value for name, value in totals.items() if name not in counts}
    metrics = {name: float(value) for name, value in objective.metrics(sums, counts).items()}
    metrics["loss"] = sum(batch_losses) / len(batch_losses)
    metrics["global_step"] = trainer.global_step
    return metrics
