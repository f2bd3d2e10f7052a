"""NER predictions made results: each word's tag from its labelled window, the file with the
predicted tags appended (what conlleval reads), conlleval's report and its metrics."""

from __future__ import annotations

import logging
import os

import numpy as np

from bert_tf.io.fileio import atomic_write_text
from bert_tf.ner import conlleval
from bert_tf.ner.data import ConllFile
from bert_tf.ner.features import InputFeatures

logger = logging.getLogger(__name__)

# The split -> the prefix of its output files and metrics.
PREFIXES = {"dev": "eval", "test": "test"}


def output_files(split: str) -> list[str]:
    prefix = PREFIXES[split]
    return [f"{prefix}_predictions.txt", f"{prefix}_conlleval.txt"]


def predict_tags(
    logits: np.ndarray, features: list[InputFeatures], labels: list[str], conll: ConllFile
) -> tuple[list[list[str]], float]:
    """The IOB2 tags predicted for every sentence of `conll` from the windows' logits
    [N, S, L], and the mean loss over its words.

    Raises:
        RuntimeError: a word without a prediction (the windows must label each word once).
    """
    log_probs = logits.astype(np.float64)
    log_probs -= log_probs.max(-1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))  # [N, S, L]
    sentences = conll.sentences
    predictions = [[None] * len(s.words) for s in sentences]
    nll = []
    label_id = {label: i for i, label in enumerate(labels)}
    for feature, window in zip(features, log_probs, strict=True):
        for position, (sentence, word) in feature.word_at.items():
            predictions[sentence][word] = labels[int(np.argmax(window[position]))]
            nll.append(-window[position, label_id[sentences[sentence].tags[word]]])
    missing = [
        (i, w) for i, tags in enumerate(predictions) for w, t in enumerate(tags) if t is None
    ]
    if missing:
        raise RuntimeError(f"words without a prediction (sentence, word): {missing[:5]}")
    return predictions, float(np.mean(nll)) if nll else 0.0


def prediction_lines(conll: ConllFile, predicted: list[list[str]]) -> list[str]:
    """The file's lines with the predicted tag appended (conlleval's input: word ... gold
    guess), -DOCSTART- lines (guess O) and blank lines as in a CoNLL file."""
    lines = []
    tags = iter(predicted)
    for document in conll.documents:
        if document.docstart:
            lines += [" ".join([*document.docstart, "O"]) + "\n", "\n"]
        for sentence in document.sentences:
            for columns, tag in zip(sentence.columns, next(tags), strict=True):
                lines.append(" ".join([*columns, tag]) + "\n")
            lines.append("\n")
    return lines


def write_outputs(
    conll: ConllFile, predictions: list[list[str]], loss: float, output_dir: str, split: str
) -> dict:
    """Writes the split's predictions (CoNLL format, in the file's own scheme) and
    conlleval's report of them; returns the metrics (`<prefix>_precision`, ..., `_loss`)."""
    prefix = PREFIXES[split]
    predictions_file, report_file = output_files(split)
    lines = prediction_lines(conll, [conll.to_file_scheme(tags) for tags in predictions])
    atomic_write_text(os.path.join(output_dir, predictions_file), "".join(lines))
    # Scored from the lines written: the report is what conlleval prints for that file
    # (its -DOCSTART- lines count as tokens, as in the shared task's evaluation).
    result = conlleval.evaluate_lines(lines)
    report = conlleval.report(result)
    atomic_write_text(os.path.join(output_dir, report_file), report)
    logger.info("%s (%s):\n%s", conll.source, split, report)
    metrics = {f"{prefix}_{name}": value for name, value in conlleval.metrics(result).items()}
    metrics[f"{prefix}_loss"] = loss
    return metrics
