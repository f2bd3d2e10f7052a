"""SWAG (paper Sec. 4.4, Table 4) as a fine-tuning task: what run_swag.py runs.

    results = run_swag(SwagOptions(data_dir=..., do_train=True, do_eval=True, ...))

Trains on train.csv, evaluates on val.csv and predicts test.csv, with the flags of
run_classifier.py and the paper's SWAG defaults (lr 2e-5, batch 16, 3 epochs); writes to
output_dir: train/eval/predict.tf_record, the checkpoints, eval_results.txt (eval_accuracy,
eval_loss, global_step, loss), test_results.tsv (each test example's 4 probabilities) and
predictions.csv (`id,pred`).
"""

from __future__ import annotations

import csv
import logging
import os

import numpy as np

from bert_tf.classification.results import evaluation_results, softmax, write_test_results
from bert_tf.config import BertConfig
from bert_tf.finetuning.driver import run_task
from bert_tf.finetuning.task import Predictions, Task
from bert_tf.io.fileio import atomic_open
from bert_tf.io.tfrecord import RecordSchema
from bert_tf.swag.data import SwagExample, get_examples
from bert_tf.swag.features import (
    convert_examples_to_features,
    record_schema,
    record_values,
)
from bert_tf.swag.objective import MultipleChoice
from bert_tf.swag.options import SwagOptions

logger = logging.getLogger(__name__)

PREDICTIONS_FILE = "predictions.csv"


class SwagTask(Task):
    """SWAG's CSV files, one score per packed choice from its pooled output, the softmax over
    the 4 choices."""

    name = "SWAG"
    output_names = ("logits", "label_ids", "is_real_example")
    # SWAG's train.csv lists the questions of one video together, and the input pipeline only
    # shuffles in a 100-record buffer (as run_squad.py, so that a batch mixes videos).
    train_shuffle_seed = 12345

    def read(self, split: str) -> list[SwagExample]:
        return get_examples(self.options.data_dir, split)

    def objective(self, config: BertConfig) -> MultipleChoice:
        return MultipleChoice()

    def features(self, examples, split, tokenizer):
        return convert_examples_to_features(examples, self.options.max_seq_length, tokenizer)

    def record_schema(self, is_training: bool) -> RecordSchema:
        return record_schema(self.options.max_seq_length)

    def record_values(self, feature, is_training: bool) -> dict:
        return record_values(feature)

    def output_files(self, split: str) -> list[str]:
        return ["test_results.tsv", PREDICTIONS_FILE] if split == "test" else []

    def evaluate(self, split: str, examples, features, predictions: Predictions) -> dict:
        if split == "dev":
            return evaluation_results(predictions.outputs, self.options.eval_batch_size)
        write_predictions(examples, predictions.real("logits"), self.options.output_dir)
        return {}

    def export(self, model, export_dir: str) -> None:
        from bert_tf.swag.serving import export_swag  # TensorFlow Text only when exporting

        export_swag(
            model,
            export_dir,
            self.options.vocab_file,
            self.options.do_lower_case,
            self.options.max_seq_length,
        )


def write_predictions(examples: list[SwagExample], logits: np.ndarray, output_dir: str) -> None:
    """test_results.tsv (each example's 4 probabilities, tab-separated, as run_classifier.py's)
    and predictions.csv (`id,pred`: the example's `fold-ind` and the index of the ending
    predicted), from the examples' logits [N, 4]."""
    write_test_results(
        os.path.join(output_dir, "test_results.tsv"), softmax(logits.astype(np.float64))
    )
    with atomic_open(os.path.join(output_dir, PREDICTIONS_FILE)) as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["id", "pred"])
        for example, prediction in zip(examples, np.argmax(logits, axis=-1), strict=True):
            writer.writerow([example.swag_id, int(prediction)])
    logger.info(
        "predictions of %d examples in test_results.tsv and %s", len(examples), PREDICTIONS_FILE
    )


def run_swag(options: SwagOptions) -> dict:
    """Trains, evaluates and predicts as the options say; returns the eval metrics (or {})."""
    return run_task(SwagTask(options))
