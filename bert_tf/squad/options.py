"""run_squad.py's options: the original's flags (same names and defaults) and ours."""

from __future__ import annotations

from bert_tf.errors import InputError
from bert_tf.finetuning.options import BilstmOptions, FineTuningOptions, TfdsOptions
from bert_tf.options import option, options, positive, redefault
from bert_tf.text.windows import warn_of_long_stride


@options
class SquadOptions(FineTuningOptions, TfdsOptions, BilstmOptions):
    """run_squad.py's flags: the original's (same names and defaults) and ours."""

    train_file: str | None = option(None, "SQuAD json for training, e.g. train-v1.1.json.")
    predict_file: str | None = option(None, "SQuAD json for predictions, e.g. dev-v1.1.json.")
    max_seq_length: int = redefault(
        384,
        "The maximum total input sequence length after WordPiece tokenization; longer "
        "contexts are split into windows.",
    )
    doc_stride: int = option(
        128, "When splitting up a long document into chunks, how much stride to take.", positive
    )
    max_query_length: int = option(
        64,
        "The maximum number of tokens for the question; longer questions are truncated.",
        positive,
    )
    do_predict: bool = redefault(False, "Whether to run prediction on the predict_file.")
    predict_batch_size: int = redefault(8, "Total batch size for predictions.")
    n_best_size: int = option(
        20,
        "The total number of n-best predictions to write to nbest_predictions.json.",
        positive,
    )
    max_answer_length: int = option(
        30,
        "The maximum length of an answer, in WordPiece tokens (start and end are predicted "
        "independently, so longer spans are dropped).",
        positive,
    )
    verbose_logging: bool = option(
        False, "Log the warnings of projecting predictions back onto the text."
    )
    version_2_with_negative: bool = option(
        False, "SQuAD 2.0: some questions have no answer in the context."
    )
    null_score_diff_threshold: float = option(
        0.0, "Predict no answer when null score - best non-null score > threshold (SQuAD 2.0)."
    )
    use_tfds: bool = redefault(
        False,
        "Read tensorflow-datasets' squad/v1.1 (squad/v2.0 with --version_2_with_negative), "
        "prepared beforehand: train for training, validation for prediction.",
    )
    export_dir: str | None = redefault(
        None, "Also write a SavedModel for TF Serving here (question + context strings, and ids)."
    )

    def check(self) -> None:
        super().check()
        for action, flag in (("do_train", "train_file"), ("do_predict", "predict_file")):
            if getattr(self, action) and not (getattr(self, flag) or self.use_tfds):
                raise InputError(f"--{action} needs --{flag} (or --use_tfds)")
        if self.max_seq_length <= self.max_query_length + 3:
            raise InputError(
                f"--max_seq_length={self.max_seq_length} must be greater than "
                f"--max_query_length={self.max_query_length} + 3 ([CLS], [SEP], [SEP]): "
                "no room is left for the context"
            )
        # A window holds max_seq_length - len(question) - 3 pieces: shortest for a question of
        # max_query_length. Warned once per run, from the options, when the stride passes that
        # shortest window (the windows of the longest questions would not overlap), rather than
        # once per question from the featurization.
        warn_of_long_stride(
            self.doc_stride,
            self.max_seq_length - self.max_query_length - 3,
            f"--max_seq_length={self.max_seq_length} - --max_query_length="
            f"{self.max_query_length} - 3",
        )
