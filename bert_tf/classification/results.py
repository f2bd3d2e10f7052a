"""The classifier's predictions made results: the original's eval keys and the task's GLUE
metrics, test_results.tsv, and the GLUE submission files."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

import numpy as np

from bert_tf.classification.metrics import task_metrics
from bert_tf.classification.processors import DataProcessor
from bert_tf.io.fileio import atomic_open

logger = logging.getLogger(__name__)


def softmax(logits: np.ndarray) -> np.ndarray:
    """Probabilities [N, K] of logits [N, K]."""
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def evaluation_results(
    outputs: dict,
    batch_size: int,
    prefix: str = "eval_",
    regression: bool = False,
    metric_names: Sequence[str] = (),
) -> dict:
    """The original's eval keys (`eval_accuracy`, `eval_loss`, `loss`) plus the task's GLUE
    metrics (`metric_names`: `eval_f1`, `eval_mcc`, `eval_pearson`, `eval_spearmanr`), over
    real examples, from `outputs`' logits [N, K], label_ids [N] and is_real_example [N].

    `eval_loss` is the mean loss of the real examples; `loss` is the Estimator's: the mean
    over batches of each batch's mean loss (padding examples included, as the original)."""
    logits, labels = outputs["logits"], outputs["label_ids"]
    if regression:
        predictions = logits[:, 0]
        per_example = np.square(predictions - labels)
    else:
        log_probs = np.log(softmax(logits.astype(np.float64)))
        per_example = -log_probs[np.arange(len(labels)), labels]
        predictions = np.argmax(logits, axis=-1)
    real = outputs["is_real_example"].astype(bool)
    results = {}
    if not regression:
        results[f"{prefix}accuracy"] = float(np.mean(predictions[real] == labels[real]))
    results[f"{prefix}loss"] = float(np.mean(per_example[real]))
    metrics = task_metrics(metric_names, predictions[real], labels[real])
    results.update({f"{prefix}{name}": value for name, value in metrics.items()})
    if prefix == "eval_":
        # [num_batches, batch_size]: the eval files are padded to whole batches.
        results["loss"] = float(np.mean(per_example.reshape(-1, batch_size).mean(axis=1)))
    return results


def prediction_files(processor: DataProcessor, split: str) -> list[str]:
    """What `write_predictions` writes for a test split: test_results.tsv (or
    test_results_<suffix>.tsv) and the GLUE submission file, if the task has one."""
    suffix = split.removeprefix("test").removeprefix("_")
    files = [f"test_results_{suffix}.tsv" if suffix else "test_results.tsv"]
    if processor.name == "MNLI-m":
        files.append("MNLI-mm.tsv" if split == "test_mismatched" else "MNLI-m.tsv")
    elif processor.name != "XNLI":  # XNLI is not a GLUE task
        files.append(f"{processor.name}.tsv")
    return files


def write_predictions(
    processor: DataProcessor, examples, logits: np.ndarray, output_dir: str, split: str
) -> None:
    """test_results.tsv (as the original: each real example's class probabilities,
    tab-separated; the score for regression) and the GLUE submission file
    (`index<TAB>prediction`, the label names GLUE expects), e.g. MRPC.tsv, from the real
    examples' logits [N, K]."""
    if processor.is_regression:
        values = logits[:, :1]
        predictions = [f"{v:.3f}" for v in logits[:, 0]]
    else:
        values = softmax(logits.astype(np.float64))
        names = processor.get_labels()
        predictions = [names[i] for i in np.argmax(logits, axis=-1)]
    results_file, *submission = prediction_files(processor, split)
    write_test_results(os.path.join(output_dir, results_file), values)
    for name in submission:
        with atomic_open(os.path.join(output_dir, name)) as f:
            f.write("index\tprediction\n")
            for example, prediction in zip(examples, predictions, strict=True):
                f.write(f"{example.index}\t{prediction}\n")
    logger.info(
        "predictions of %d examples in %s", len(examples), " and ".join([results_file, *submission])
    )


def write_test_results(path: str, values: np.ndarray) -> None:
    """The original's test_results.tsv: one line per real example, its values [K]
    (probabilities or the score) tab-separated."""
    with atomic_open(path) as f:
        for row in values:
            f.write("\t".join(str(float(v)) for v in row) + "\n")
