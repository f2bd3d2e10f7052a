"""run_classifier.py's options: the original's flags (same names and defaults) and ours."""

from __future__ import annotations

from bert_tf.classification.processors import PROCESSORS, get_processor
from bert_tf.finetuning.options import BilstmOptions, DataDirOptions, FineTuningOptions, TfdsOptions
from bert_tf.options import option, options, redefault
from bert_tf.training.options import EvalOptions


@options
class ClassifierOptions(FineTuningOptions, EvalOptions, DataDirOptions, TfdsOptions, BilstmOptions):
    """run_classifier.py's flags: the original's (same names and defaults) and ours."""

    task_name: str = option(
        None,
        f"The name of the task to train: one of {', '.join(sorted(PROCESSORS))}.",
        lambda name, value: get_processor(value),
        required=True,
    )
    data_dir: str | None = redefault(
        None, "The input data dir. Should contain the .tsv files (or other data files)."
    )
    max_seq_length: int = redefault(
        128,
        "The maximum total input sequence length after WordPiece tokenization. Longer "
        "sequences are truncated, shorter ones padded.",
    )
    use_tfds: bool = redefault(
        False,
        "Read the task from tensorflow-datasets (glue/<task>, prepared beforehand) instead "
        "of --data_dir's TSV files.",
    )
