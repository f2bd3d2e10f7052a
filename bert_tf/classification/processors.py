"""GLUE (and XNLI) data: the TSV files read as the original's processors read them.

The original ships processors for CoLA, MNLI, MRPC and XNLI (its run_classifier.py); the
others follow the columns of the GLUE release. Each processor names its files, columns and
labels; `read_tsv` checks every row's column count against the file's header (or the known
count where a file has none), so a damaged file fails with its file:line instead of feeding
the wrong column to the model.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import read_text
from bert_tf.tokenization import convert_to_unicode


@dataclasses.dataclass
class InputExample:
    """One example: `text_b` None for single sentences, `label` a label name (a string; a
    float for regression), `index` the row's id in a GLUE test file (for submission files)."""

    guid: str
    text_a: str
    text_b: str | None = None
    label: str | float | None = None
    index: str | None = None


def read_tsv(path: str, header: bool, columns: int | None = None) -> list[tuple[int, list[str]]]:
    """(line number, cells) of each data row of a tab-separated file, as the original reads it
    (`csv.reader(delimiter="\\t", quotechar=None)`: quotes are text).

    `header`: the first row names the columns (and is skipped); every row must have as many
    cells as it, or `columns` where there is no header.

    Raises:
        InputError: the file is missing or empty, or a row has the wrong number of columns.
    """
    if not filesystem.isfile(path):
        raise InputError(f"{path}: no such file (check --data_dir and --task_name)")
    text = read_text(path, "a tab-separated GLUE file")
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t", quotechar=None))
    if not rows or (header and len(rows) == 1):
        raise InputError(f"{path}: the file has no examples")
    if header:
        columns = len(rows[0])
    numbered = list(enumerate(rows, start=1))[1 if header else 0 :]
    for line, row in numbered:
        if columns is not None and len(row) != columns:
            raise InputError(
                f"{path}:{line}: {len(row)} tab-separated columns; expected {columns}"
                + (" as in the header" if header else "")
            )
    return [(line, [convert_to_unicode(cell) for cell in row]) for line, row in numbered]


class DataProcessor:
    """A task: its files, how a row becomes an InputExample, its labels and metrics.

    Subclasses set `name` (as GLUE's submission file names the task), `labels`
    (None for regression), `metric_names` and the per-split `_columns`:
    split -> (file name, has header, text_a column, text_b column or None, label column or None).
    """

    name = ""
    labels: tuple[str, ...] | None = ()
    metric_names: tuple[str, ...] = ("accuracy",)
    # The label written for unlabelled test rows (the original puts a valid label there).
    test_label: str | None = None
    _columns: dict[str, tuple[str, bool, int, int | None, int | None]] = {}
    # Column count of the header-less files (CoLA's train and dev).
    _headerless_columns: int | None = None

    @property
    def is_regression(self) -> bool:
        return self.labels is None

    @property
    def is_pair(self) -> bool:
        """Whether examples are sentence pairs (text_b)."""
        return self._columns["train"][3] is not None

    def get_labels(self) -> list[str]:
        return list(self.labels or [])

    def get_train_examples(self, data_dir: str) -> list[InputExample]:
        return self.get_examples(data_dir, "train")

    def get_dev_examples(self, data_dir: str) -> list[InputExample]:
        return self.get_examples(data_dir, "dev")

    def get_test_examples(self, data_dir: str) -> list[InputExample]:
        return self.get_examples(data_dir, "test")

    def split_file(self, split: str) -> tuple[str, bool]:
        """(file name under data_dir, whether it has a header row) of `split`."""
        file_name, header = self._columns[split][:2]
        return file_name, header

    def splits(self) -> list[str]:
        return list(self._columns)

    def get_examples(self, data_dir: str, split: str) -> list[InputExample]:
        """The examples of `split` ("train", "dev", "test", or a task's extra split such as
        MNLI's "dev_mismatched")."""
        file_name, header, a, b, label_column = self._columns[split]
        path = os.path.join(data_dir, file_name)
        rows = read_tsv(path, header, None if header else self._headerless_columns)
        # Every row has the first one's width (read_tsv): enough for the columns read?
        needed = 1 + max(i for i in (0, a, b, label_column) if i is not None)
        if len(rows[0][1]) < needed:
            raise InputError(
                f"{path}:{rows[0][0]}: {len(rows[0][1])} tab-separated column(s); {self.name}'s "
                f"{file_name} has at least {needed} (is --task_name={self.name} the right task?)"
            )
        examples = []
        for line, row in rows:
            if not self._keep(split, row):
                continue
            label = self.test_label if label_column is None else row[label_column]
            label = self._check_label(label, path, line) if label is not None else None
            examples.append(
                InputExample(
                    guid=f"{split}-{line - 1}",
                    text_a=row[a],
                    text_b=None if b is None else row[b],
                    label=label,
                    # GLUE's test files number their rows in the first column.
                    index=row[0] if split.startswith("test") else None,
                )
            )
        return examples

    def _keep(self, split: str, row: list[str]) -> bool:
        return True

    def _check_label(self, label: str, path: str, line: int):
        if self.is_regression:
            try:
                return float(label)
            except ValueError:
                raise InputError(
                    f"{path}:{line}: label {label!r} is not a number (the {self.name} score)"
                ) from None
        if label not in self.labels:
            raise InputError(
                f"{path}:{line}: unknown label {label!r}; expected one of {list(self.labels)}"
            )
        return label


class ColaProcessor(DataProcessor):
    """CoLA: single sentences, grammatical (1) or not (0); Matthews correlation.
    Only the test file has a header (as the original reads it)."""

    name = "CoLA"
    labels = ("0", "1")
    metric_names = ("mcc", "accuracy")
    test_label = "0"
    _headerless_columns = 4
    _columns = {
        "train": ("train.tsv", False, 3, None, 1),
        "dev": ("dev.tsv", False, 3, None, 1),
        "test": ("test.tsv", True, 1, None, None),
    }


class Sst2Processor(DataProcessor):
    name = "SST-2"
    labels = ("0", "1")
    test_label = "0"
    _columns = {
        "train": ("train.tsv", True, 0, None, 1),
        "dev": ("dev.tsv", True, 0, None, 1),
        "test": ("test.tsv", True, 1, None, None),
    }


class MrpcProcessor(DataProcessor):
    """MRPC: paraphrase (1) or not (0); F1 and accuracy."""

    name = "MRPC"
    labels = ("0", "1")
    metric_names = ("f1", "accuracy")
    test_label = "0"
    _columns = {
        "train": ("train.tsv", True, 3, 4, 0),
        "dev": ("dev.tsv", True, 3, 4, 0),
        "test": ("test.tsv", True, 3, 4, None),
    }


class StsbProcessor(DataProcessor):
    """STS-B: a similarity score in [0, 5], regressed; Pearson and Spearman correlation."""

    name = "STS-B"
    labels = None
    metric_names = ("pearson", "spearmanr")
    test_label = None
    _columns = {
        "train": ("train.tsv", True, 7, 8, -1),
        "dev": ("dev.tsv", True, 7, 8, -1),
        "test": ("test.tsv", True, 7, 8, None),
    }


class QqpProcessor(DataProcessor):
    """QQP: duplicate question pairs (1) or not (0); F1 and accuracy."""

    name = "QQP"
    labels = ("0", "1")
    metric_names = ("f1", "accuracy")
    test_label = "0"
    _columns = {
        "train": ("train.tsv", True, 3, 4, 5),
        "dev": ("dev.tsv", True, 3, 4, 5),
        "test": ("test.tsv", True, 1, 2, None),
    }


class MnliProcessor(DataProcessor):
    """MNLI: dev/test matched as the original, and mismatched as extra splits."""

    name = "MNLI-m"
    labels = ("contradiction", "entailment", "neutral")
    test_label = "contradiction"
    _columns = {
        "train": ("train.tsv", True, 8, 9, -1),
        "dev": ("dev_matched.tsv", True, 8, 9, -1),
        "test": ("test_matched.tsv", True, 8, 9, None),
        "dev_mismatched": ("dev_mismatched.tsv", True, 8, 9, -1),
        "test_mismatched": ("test_mismatched.tsv", True, 8, 9, None),
    }


class QnliProcessor(DataProcessor):
    name = "QNLI"
    labels = ("entailment", "not_entailment")
    test_label = "entailment"
    _columns = {
        "train": ("train.tsv", True, 1, 2, -1),
        "dev": ("dev.tsv", True, 1, 2, -1),
        "test": ("test.tsv", True, 1, 2, None),
    }


class RteProcessor(QnliProcessor):
    name = "RTE"


class WnliProcessor(DataProcessor):
    name = "WNLI"
    labels = ("0", "1")
    test_label = "0"
    _columns = {
        "train": ("train.tsv", True, 1, 2, -1),
        "dev": ("dev.tsv", True, 1, 2, -1),
        "test": ("test.tsv", True, 1, 2, None),
    }


class AxProcessor(DataProcessor):
    """GLUE's diagnostic set (AX; download_glue_data.py's diagnostic/diagnostic.tsv): sentence
    pairs with no label and no training split, which GLUE's submission predicts with the MNLI
    model (--do_predict with --init_checkpoint its output_dir)."""

    name = "AX"
    labels = MnliProcessor.labels
    test_label = MnliProcessor.test_label
    _columns = {"test": ("diagnostic.tsv", True, 1, 2, None)}

    @property
    def is_pair(self) -> bool:
        return True


class XnliProcessor(DataProcessor):
    """XNLI as the original has it: Chinese ("zh", hard-coded there too), training on the
    machine-translated MultiNLI and evaluating on the XNLI dev set. No test split."""

    name = "XNLI"
    language = "zh"
    labels = ("contradiction", "entailment", "neutral")
    _columns = {
        "train": (f"multinli/multinli.train.{language}.tsv", True, 0, 1, 2),
        "dev": ("xnli.dev.tsv", True, 6, 7, 1),
    }

    def _keep(self, split: str, row: list[str]) -> bool:
        return split != "dev" or row[0] == self.language

    def _check_label(self, label: str, path: str, line: int):
        # The translated training data spells one label differently.
        return super()._check_label(
            "contradiction" if label == "contradictory" else label, path, line
        )


PROCESSORS: dict[str, type[DataProcessor]] = {
    "cola": ColaProcessor,
    "sst-2": Sst2Processor,
    "mrpc": MrpcProcessor,
    "sts-b": StsbProcessor,
    "qqp": QqpProcessor,
    "mnli": MnliProcessor,
    "qnli": QnliProcessor,
    "rte": RteProcessor,
    "wnli": WnliProcessor,
    "ax": AxProcessor,
    "xnli": XnliProcessor,
}
# Spellings users type for the same tasks.
_ALIASES = {"sst2": "sst-2", "stsb": "sts-b", "sts": "sts-b"}


def get_processor(task_name: str) -> DataProcessor:
    """The processor of `task_name` (case-insensitive, as the original lower-cases it).

    Raises:
        InputError: unknown task (the message lists the valid ones).
    """
    key = task_name.lower()
    key = _ALIASES.get(key, key)
    if key not in PROCESSORS:
        raise InputError(
            f"--task_name={task_name!r} is not a task; expected one of {sorted(PROCESSORS)}"
        )
    return PROCESSORS[key]()
