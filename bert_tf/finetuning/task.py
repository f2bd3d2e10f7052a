"""A fine-tuning task: what GLUE, SQuAD, NER and SWAG each own, and nothing else.

`bert_tf.finetuning.run_task(task)` owns the rest, once for every task: the checks, the model
files, the schedule, the strategy and trainer, the records (written by the chief, read by every
worker), training, prediction in record order, the results files and summaries, and the export
on the chief. A task says how its data is read, turned into features and records, batched,
learned (its objective) and turned back into metrics and files.

docs/adding_a_task.md lists the hooks; tests/test_task.py writes a whole task
(does a sentence name a pet) and runs it.

Splits are named "train", "dev" and "test" (GLUE's MNLI adds "dev_mismatched" and
"test_mismatched"): "dev" splits are evaluated with --do_eval, "test" ones predicted with
--do_predict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from bert_tf.config import BertConfig
from bert_tf.io.tfrecord import RecordSchema
from bert_tf.model_io.source import ModelSource
from bert_tf.tokenization import FullTokenizer
from bert_tf.training.objective import Objective


@dataclasses.dataclass
class Predictions:
    """The model's outputs over a split's records, in the records' order: the real features'
    first (`num_real` of them), then the padding that fills the last batch."""

    outputs: dict[str, np.ndarray]
    num_real: int

    def real(self, name: str) -> np.ndarray:
        """`name`'s rows of the real features only."""
        return self.outputs[name][: self.num_real]


class Task:
    """The hooks of one fine-tuning task; `options` holds its flags (those the driver reads
    too: a `FineTuningOptions`)."""

    name = ""
    # The model outputs (and record features) that prediction gathers.
    output_names: tuple[str, ...] = ()
    # The record file of each split in output_dir (the original's names), else <split>.tf_record.
    record_files = {
        "train": "train.tf_record",
        "dev": "eval.tf_record",
        "test": "predict.tf_record",
    }
    # Where each split's metrics go: `<name>_results.txt` (the original's `key = value` lines,
    # with the global step; splits sharing a file are merged) or `.json` (as is); TensorBoard's
    # folder is output_dir/<name>. A split without a file records no metrics.
    results_files = {"dev": "eval_results.txt"}
    # The training examples are shuffled once, with this seed, before their records are written,
    # where the data keeps related examples together (the pipeline shuffles in a 100-record
    # buffer); None: as read.
    train_shuffle_seed: int | None = None

    def __init__(self, options) -> None:
        self.options = options
        # --init_checkpoint's files, resolved once by the driver (None without one).
        self.init_source: ModelSource | None = None
        # --output_dir as a model directory (what an earlier run fine-tuned there): the driver's.
        self.output_source: ModelSource | None = None
        # What reading left out, in a line each (SQuAD's questions whose answer is not at its
        # answer_start), repeated at the end of the run where its summary is read.
        self.read_notes: list[str] = []

    # Reading. ---------------------------------------------------------------------------------

    def prediction_splits(self) -> dict[str, int]:
        """The splits evaluated (--do_eval: "dev") and predicted (--do_predict: "test") in
        this run, in that order, each with its batch size."""
        splits = {}
        if getattr(self.options, "do_eval", False):
            splits["dev"] = self.options.eval_batch_size
        if self.options.do_predict:
            splits["test"] = self.options.predict_batch_size
        return splits

    def read(self, split: str) -> Sequence:
        """The examples of `split`. Raises `InputError` for a bad file."""
        raise NotImplementedError

    def prepare(self, examples: dict[str, Sequence]) -> None:
        """What depends on several splits, once all are read (NER: the label set, from the
        training file or the trained model's, and the other splits' tags checked against
        it). Raises `InputError`."""

    # Model. -----------------------------------------------------------------------------------

    def objective(self, config: BertConfig) -> Objective:
        raise NotImplementedError

    def model_labels(self) -> list[str] | None:
        """The labels of the model's outputs, kept with it (labels.txt); None: unlabelled."""
        return None

    # Features and records. --------------------------------------------------------------------

    def features(self, examples: Sequence, split: str, tokenizer: FullTokenizer) -> list:
        """The model inputs of the examples (several per example where windows are cut)."""
        raise NotImplementedError

    def training_instances(self, examples: Sequence, features: list) -> int:
        """What an epoch counts (the original: the examples)."""
        return len(examples)

    def record_schema(self, is_training: bool) -> RecordSchema:
        """Its records, declared once: each feature's name, shape and dtype (the driver
        encodes, pads and parses them by it)."""
        raise NotImplementedError

    def record_values(self, feature, is_training: bool) -> dict:
        """One feature's values, by the schema's names."""
        raise NotImplementedError

    # Results. ---------------------------------------------------------------------------------

    def output_files(self, split: str) -> list[str]:
        """The files `evaluate` writes for `split` in output_dir, removed before a run."""
        return []

    def evaluate(self, split: str, examples: Sequence, features: list, predictions: Predictions):
        """The metrics of `split` (a dict, or {} for nothing to record); writes its files
        (predictions, reports) to `self.options.output_dir`. Called on the chief only."""
        raise NotImplementedError

    def export(self, model, export_dir: str) -> None:
        """Writes the SavedModel for TF Serving (raw text in)."""
        raise NotImplementedError
