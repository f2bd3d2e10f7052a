"""The options every fine-tuning script shares: the original's (same names and defaults) and
ours, in groups that a task's options class takes as it needs them (SQuAD has no --do_eval,
SWAG no tensorflow-datasets)."""

from __future__ import annotations

from bert_tf.errors import InputError
from bert_tf.options import (
    Options,
    greater_than_zero,
    one_of,
    option,
    options,
    positive,
    proportion,
)
from bert_tf.training.options import TrainingOptions


@options
class FineTuningOptions(TrainingOptions):
    """The original's fine-tuning flags, with its defaults (the TPU and runtime ones are
    `TrainingOptions`')."""

    vocab_file: str = option(
        None, "The vocabulary file that the BERT model was trained on.", required=True
    )
    do_lower_case: bool | None = option(
        None,
        "Whether to lower case the input text. Should be True for uncased models and False for "
        "cased models (default: as the model's files, name or vocab say, else True).",
    )
    do_predict: bool = option(False, "Whether to run the model in inference mode on the test set.")
    predict_batch_size: int = option(8, "Total batch size for predict.", positive)
    num_train_epochs: float = option(
        3.0, "Total number of training epochs to perform.", greater_than_zero
    )
    warmup_proportion: float = option(
        0.1, "Proportion of training to perform linear learning rate warmup for.", proportion
    )
    export_dir: str | None = option(
        None, "Also write a SavedModel for TF Serving here (raw-text and input-ids signatures)."
    )
    export_dtype: str = option(
        "float32",
        "The --export_dir SavedModel's weights and compute: float32, or bfloat16 (half the "
        "memory; faster on GPUs and on CPUs with AVX512-BF16 or AMX, slower on others).",
        one_of("float32", "bfloat16"),
    )

    def check(self) -> None:
        super().check()
        actions = [name for name in ("do_train", "do_eval", "do_predict") if hasattr(self, name)]
        if not any(getattr(self, name) for name in actions + ["export_dir"]):
            listed = ", ".join(f"--{name}" for name in actions)
            raise InputError(f"at least one of {listed} or --export_dir is needed")
        if self.max_seq_length < 3:
            raise InputError(f"--max_seq_length={self.max_seq_length}; expected at least 3")

    @property
    def reads_data(self) -> bool:
        return self.do_train or getattr(self, "do_eval", False) or self.do_predict


@options
class TfdsOptions(Options):
    """Reading the task from tensorflow-datasets instead of its files."""

    use_tfds: bool = option(
        False, "Read the task from tensorflow-datasets (prepared beforehand) instead of its files."
    )
    tfds_data_dir: str | None = option(None, "tensorflow-datasets' data_dir (its local cache).")


@options
class DataDirOptions(Options):
    """The task's files, in one folder."""

    data_dir: str | None = option(None, "The input data dir.")

    def check(self) -> None:
        super().check()
        if self.data_dir or not self.reads_data or getattr(self, "use_tfds", False):
            return
        alternative = (
            " (or --use_tfds to read tensorflow-datasets)" if hasattr(self, "use_tfds") else ""
        )
        raise InputError(f"--data_dir is required{alternative}")


@options
class BilstmOptions(Options):
    bilstm: bool = option(
        False,
        'Paper Table 5\'s "+ BiLSTM": a randomly initialised BiLSTM (hidden_size units per '
        "direction) between the encoder's sequence output and the task head.",
    )
