"""SWAG's CSV files (Zellers et al., 2018): train.csv, val.csv and test.csv.

Each row is a video caption cut in two: `sent1`, the first sentence (the context), and `sent2`,
the first words of the next one; `ending0`..`ending3` complete `sent2`, and `label` (absent
from test.csv) is the index of the real ending. The released files have the header

    video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label

after an unnamed index column. Columns are found by name, so a file with only `sent1`,
`sent2`, `ending0`..`ending3` (and `label`) reads too. As the standard BERT setup for SWAG,
sentence A is `sent1` and choice i is `sent2 + " " + ending_i`.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import read_text

NUM_CHOICES = 4
ENDINGS = tuple(f"ending{i}" for i in range(NUM_CHOICES))
TEXT_COLUMNS = ("sent1", "sent2", *ENDINGS)
LABELS = tuple(str(i) for i in range(NUM_CHOICES))

# split -> file name under --data_dir, as SWAG releases them.
SPLIT_FILES = {"train": "train.csv", "dev": "val.csv", "test": "test.csv"}


@dataclasses.dataclass
class SwagExample:
    """One question: the context, the shared start of the endings, the 4 endings and the
    index of the right one (None in test.csv). `swag_id` is the row's `fold-ind` where the
    file has that column, else the row's index among the data rows."""

    swag_id: str
    context_sentence: str  # sent1: segment A
    start_ending: str  # sent2: the first words of every choice
    endings: list[str]  # [NUM_CHOICES]
    label: int | None = None

    @property
    def choices(self) -> list[str]:
        """The text of each choice (segment B): `sent2 + " " + ending_i`."""
        return [f"{self.start_ending} {ending}".strip() for ending in self.endings]


def read_swag_examples(path: str, has_label: bool = True) -> list[SwagExample]:
    """The examples of a SWAG CSV file (comma-separated, double-quoted, as SWAG's files).

    `has_label`: the file must have a `label` column (train.csv, val.csv); without it, a
    `label` column is read when there is one (a labelled test file) and may be absent.

    Raises:
        InputError: the file is missing or has no example; a column is missing; a row has
            the wrong number of fields, an empty ending or a label that is not 0-3 (naming
            the file:line, the value and what was expected).
    """
    if not filesystem.isfile(path):
        raise InputError(f"{path}: no such file (check --data_dir)")
    with io.StringIO(read_text(path, "a SWAG CSV file"), newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        required = TEXT_COLUMNS + (("label",) if has_label else ())
        missing = [name for name in required if name not in header]
        if missing:
            raise InputError(
                f"{path}: no column {', '.join(missing)} in the header; expected SWAG's columns "
                f"{', '.join(required)} (the header: {','.join(header) or 'empty'})"
            )
        labelled = "label" in header
        examples = []
        for row in reader:
            line = reader.line_num  # the line the row ends on (a quoted field may span lines)
            _check_fields(row, len(header), path, line)
            examples.append(
                SwagExample(
                    swag_id=row["fold-ind"] if "fold-ind" in header else str(len(examples)),
                    context_sentence=row["sent1"],
                    start_ending=row["sent2"],
                    endings=[_ending(row, name, path, line) for name in ENDINGS],
                    label=_label(row["label"], path, line) if labelled else None,
                )
            )
    if not examples:
        raise InputError(f"{path}: the file has no examples")
    return examples


def get_examples(data_dir: str, split: str) -> list[SwagExample]:
    """The examples of `split` ("train", "dev" or "test") from SWAG's file in `data_dir`."""
    return read_swag_examples(os.path.join(data_dir, SPLIT_FILES[split]), has_label=split != "test")


def _check_fields(row: dict, columns: int, path: str, line: int) -> None:
    # csv.DictReader puts extra fields under the key None and fills missing ones with None.
    fields = columns + len(row.get(None) or []) - sum(v is None for v in row.values())
    if fields != columns:
        raise InputError(
            f"{path}:{line}: {fields} comma-separated fields; expected {columns} as in the header"
        )


def _ending(row: dict, name: str, path: str, line: int) -> str:
    ending = row[name]
    if not ending.strip():
        raise InputError(
            f"{path}:{line}: {name} is {ending!r}; expected the text of each of the "
            f"{NUM_CHOICES} endings"
        )
    return ending


def _label(label: str, path: str, line: int) -> int:
    if label.strip() not in LABELS:
        raise InputError(
            f"{path}:{line}: label {label!r}; expected the index of the right ending, one of "
            f"{', '.join(LABELS)}"
        )
    return int(label)
