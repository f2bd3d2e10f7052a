"""The metrics GLUE reports, in numpy (as sklearn/scipy define them; neither is a dependency).

accuracy; F1 of the positive class "1" (MRPC, QQP); Matthews correlation (CoLA); Pearson and
Spearman correlation (STS-B).
"""

from __future__ import annotations

import numpy as np


def accuracy(predictions, labels) -> float:
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    return float(np.mean(predictions == labels)) if labels.size else 0.0


def f1(predictions, labels, positive: int = 1) -> float:
    """F1 of class `positive`: 2 tp / (2 tp + fp + fn); 0 when there is no positive at all."""
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    tp = np.sum((predictions == positive) & (labels == positive))
    fp = np.sum((predictions == positive) & (labels != positive))
    fn = np.sum((predictions != positive) & (labels == positive))
    denominator = 2 * tp + fp + fn
    return float(2 * tp / denominator) if denominator else 0.0


def matthews_corrcoef(predictions, labels) -> float:
    """(tp tn - fp fn) / sqrt((tp + fp)(tp + fn)(tn + fp)(tn + fn)) for binary labels; 0 when
    a factor of the denominator is 0 (as sklearn)."""
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    tp = float(np.sum((predictions == 1) & (labels == 1)))
    tn = float(np.sum((predictions == 0) & (labels == 0)))
    fp = float(np.sum((predictions == 1) & (labels == 0)))
    fn = float(np.sum((predictions == 0) & (labels == 1)))
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return float((tp * tn - fp * fn) / denominator) if denominator else 0.0


def pearson(x, y) -> float:
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    x, y = x - x.mean(), y - y.mean()
    denominator = np.sqrt(np.sum(x * x) * np.sum(y * y))
    return float(np.sum(x * y) / denominator) if denominator else 0.0


def _ranks(values) -> np.ndarray:
    """1-based ranks; tied values share the mean of their ranks (as scipy.stats.rankdata)."""
    values = np.asarray(values, np.float64)
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values), np.float64)
    ranks[order] = np.arange(1, len(values) + 1)
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return sums[inverse] / counts[inverse]


def spearman(x, y) -> float:
    """Pearson correlation of the ranks."""
    return pearson(_ranks(x), _ranks(y))


def task_metrics(metric_names, predictions, labels) -> dict[str, float]:
    """The named metrics of a task (see processors.DataProcessor.metric_names)."""
    functions = {
        "accuracy": accuracy,
        "f1": f1,
        "mcc": matthews_corrcoef,
        "pearson": pearson,
        "spearmanr": spearman,
    }
    return {name: functions[name](predictions, labels) for name in metric_names}
