"""run_swag.py's options: run_classifier.py's flags with the paper's SWAG defaults (lr 2e-5,
batch 16, 3 epochs)."""

from __future__ import annotations

from bert_tf.finetuning.options import DataDirOptions, FineTuningOptions
from bert_tf.options import options, redefault
from bert_tf.training.options import EvalOptions


@options
class SwagOptions(FineTuningOptions, EvalOptions, DataDirOptions):
    """run_swag.py's flags: run_classifier.py's (same names), the paper's SWAG defaults."""

    data_dir: str | None = redefault(
        None, "The input data dir: SWAG's train.csv, val.csv and test.csv."
    )
    max_seq_length: int = redefault(
        128,
        "The maximum total input sequence length of each choice ([CLS] sent1 [SEP] sent2 "
        "ending [SEP]) after WordPiece tokenization. Longer sequences are truncated, shorter "
        "ones padded.",
    )
    do_train: bool = redefault(False, "Whether to run training (train.csv).")
    do_eval: bool = redefault(False, "Whether to run eval on the dev set (val.csv).")
    do_predict: bool = redefault(
        False, "Whether to run the model in inference mode on the test set (test.csv)."
    )
    train_batch_size: int = redefault(16, "Total batch size (examples) for training.")
    eval_batch_size: int = redefault(8, "Total batch size (examples) for eval.")
    predict_batch_size: int = redefault(8, "Total batch size (examples) for predict.")
    learning_rate: float = redefault(2e-5)
    export_dir: str | None = redefault(
        None,
        "Also write a SavedModel for TF Serving here (SWAG's columns as strings in, and the "
        "ids signature).",
    )
