"""Table 1's test column as GLUE's server takes it: one zip with a predictions file per task at
its top (gluebenchmark.com's sample submission): each task's best run on Dev, MNLI's matched
and mismatched from the one MNLI model chosen on MNLI-m, AX (the diagnostic set) from that
model too, and WNLI's majority class (the paper's Appendix B.1: its Dev set is adversarial)."""

from __future__ import annotations

import collections
import io
import os
import zipfile

from bert_tf.classification.processors import get_processor
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_open, atomic_write_text

# The files of a whole submission, as GLUE's server names them.
GLUE_FILES = (
    "CoLA.tsv", "SST-2.tsv", "MRPC.tsv", "STS-B.tsv", "QQP.tsv", "MNLI-m.tsv", "MNLI-mm.tsv",
    "QNLI.tsv", "RTE.tsv", "WNLI.tsv", "AX.tsv",
)  # fmt: skip


def majority_predictions(data_dir: str, output_file: str) -> int:
    """WNLI's test predictions, every row the most frequent label of its training set (as the
    paper: "we predict the majority class"); returns the rows written."""
    processor = get_processor("WNLI")
    train = processor.get_train_examples(data_dir)
    majority = collections.Counter(example.label for example in train).most_common(1)[0][0]
    test = processor.get_test_examples(data_dir)
    rows = ["index\tprediction"] + [f"{example.index}\t{majority}" for example in test]
    atomic_write_text(output_file, "\n".join(rows) + "\n")
    return len(test)


def write_submission(files: dict[str, str], archive: str) -> list[str]:
    """Zips `files` (GLUE file name -> the predictions file) into `archive`, each at its top
    under its GLUE name; returns the GLUE files missing from it (a partial archive is written
    all the same, named in the table's notes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name in GLUE_FILES:
            if name in files:
                with filesystem.open_file(files[name], "rb") as f:
                    zipped.writestr(name, f.read())
    with atomic_open(archive, "wb") as f:
        f.write(buffer.getvalue())
    return [name for name in GLUE_FILES if name not in files]


def predictions_files(run_dir: str, task: str) -> list[tuple[str, str]]:
    """(GLUE name, path) of the predictions files a run of `task` wrote with --do_predict."""
    names = ["MNLI-m.tsv", "MNLI-mm.tsv"] if task == "MNLI" else [f"{task}.tsv"]
    return [(name, os.path.join(run_dir, name)) for name in names]
