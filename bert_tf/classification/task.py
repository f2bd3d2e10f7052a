"""GLUE (and XNLI) sentence(-pair) classification as a fine-tuning task: what run_classifier.py
runs.

    results = run_classifier(ClassifierOptions(task_name="MRPC", data_dir=..., ...))

Writes to output_dir, as the original: train/eval/predict.tf_record, the checkpoints,
eval_results.txt (the original's keys and the task's GLUE metrics), test_results.tsv, and the
GLUE submission file (e.g. MRPC.tsv) with --do_predict.
"""

from __future__ import annotations

from bert_tf.classification.features import (
    convert_examples_to_features,
    record_schema,
    record_values,
)
from bert_tf.classification.objective import Classification
from bert_tf.classification.options import ClassifierOptions
from bert_tf.classification.processors import DataProcessor, get_processor
from bert_tf.classification.results import evaluation_results, prediction_files, write_predictions
from bert_tf.classification.tfds_glue import tfds_examples
from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.finetuning.driver import run_task
from bert_tf.finetuning.task import Predictions, Task
from bert_tf.io.tfrecord import RecordSchema


class GlueTask(Task):
    """A GLUE task's TSV files (or tensorflow-datasets' glue/<task>), the classifier on the
    pooled output, accuracy and the task's GLUE metrics, and the submission files."""

    output_names = ("logits", "label_ids", "is_real_example")

    @property
    def processor(self) -> DataProcessor:
        return get_processor(self.options.task_name)

    @property
    def name(self) -> str:
        return self.processor.name

    @property
    def labels(self) -> list[str] | None:
        return None if self.processor.is_regression else self.processor.get_labels()

    def model_labels(self) -> list[str] | None:
        return self.labels or None  # regression (STS-B): one output, no label

    def prediction_splits(self) -> dict[str, int]:
        # MNLI's Dev and test sets come matched and mismatched.
        splits = self.processor.splits()
        chosen = {}
        if self.options.do_eval:
            chosen.update({s: self.options.eval_batch_size for s in splits if s.startswith("dev")})
        if self.options.do_predict:
            tests = [s for s in splits if s.startswith("test")]
            if not tests:
                raise InputError(f"--do_predict: the {self.name} task has no test set")
            chosen.update({s: self.options.predict_batch_size for s in tests})
        return chosen

    @property
    def results_files(self) -> dict[str, str]:
        return {s: "eval_results.txt" for s in self.processor.splits() if s.startswith("dev")}

    def read(self, split: str):
        if self.options.use_tfds:
            return tfds_examples(self.processor, split, self.options.tfds_data_dir)
        return self.processor.get_examples(self.options.data_dir, split)

    def objective(self, config: BertConfig) -> Classification:
        return Classification(
            len(self.labels or []),
            regression=self.processor.is_regression,
            bilstm_units=config.hidden_size if self.options.bilstm else None,
        )

    def features(self, examples, split, tokenizer):
        return convert_examples_to_features(
            examples, self.labels, self.options.max_seq_length, tokenizer
        )

    def record_schema(self, is_training: bool) -> RecordSchema:
        return record_schema(self.options.max_seq_length, self.processor.is_regression)

    def record_values(self, feature, is_training: bool) -> dict:
        return record_values(feature)

    def output_files(self, split: str) -> list[str]:
        return prediction_files(self.processor, split) if split.startswith("test") else []

    def evaluate(self, split: str, examples, features, predictions: Predictions) -> dict:
        if split.startswith("test"):
            write_predictions(
                self.processor, examples, predictions.real("logits"), self.options.output_dir, split
            )
            return {}
        return evaluation_results(
            predictions.outputs,
            self.options.eval_batch_size,
            "eval_" if split == "dev" else f"eval_{split.removeprefix('dev_')}_",
            regression=self.processor.is_regression,
            metric_names=self.processor.metric_names,
        )

    def export(self, model, export_dir: str) -> None:
        from bert_tf.classification.serving import export_classifier  # TensorFlow Text: here only

        export_classifier(
            model,
            export_dir=export_dir,
            vocab_file=self.options.vocab_file,
            do_lower_case=self.options.do_lower_case,
            max_seq_length=self.options.max_seq_length,
            labels=self.labels,
            text_pairs=self.processor.is_pair,
        )


def run_classifier(options: ClassifierOptions) -> dict:
    """Trains, evaluates and predicts as the original's run_classifier.py; returns the eval
    metrics (or {})."""
    return run_task(GlueTask(options))
