"""The options of pre-training: data generation's (create_pretraining_data.py's flags) and the
run's (run_pretraining.py's), with the original's defaults; read before TensorFlow starts."""

from __future__ import annotations

import functools

from bert_tf.errors import InputError
from bert_tf.io.fileio import TextInputOptions
from bert_tf.options import (
    at_least,
    non_negative,
    one_of,
    option,
    options,
    positive,
    proportion,
    redefault,
)
from bert_tf.pretraining.masking import parse_masking_rates
from bert_tf.training.options import EvalOptions, TrainingOptions

# Paper Table 5's objectives: BERT, No NSP, LTR & No NSP (`objectives.get_objective`).
OBJECTIVES = ("mlm_nsp", "mlm", "ltr")


@options
class GeneratorOptions(TextInputOptions):
    """The generation flags of create_pretraining_data.py, with the original's defaults."""

    max_seq_length: int = option(
        128,
        "Maximum sequence length ([CLS] A [SEP] B [SEP]: at least 5).",
        at_least(5),
    )
    max_predictions_per_seq: int = option(
        20, "Maximum number of masked LM predictions per sequence.", positive
    )
    dupe_factor: int = option(
        10, "Number of times to duplicate the input data (with different masks).", positive
    )
    masked_lm_prob: float = option(0.15, "Masked LM probability.")
    short_seq_prob: float = option(
        0.1, "Probability of creating sequences shorter than the maximum length.", proportion
    )
    do_whole_word_mask: bool = option(False, "Mask whole words instead of single WordPieces.")
    per_word_mask_decision: bool = option(
        False,
        "With --do_whole_word_mask: one MASK/SAME/RND decision per word instead of per "
        "WordPiece (the original decides per WordPiece; google-research/bert#910).",
    )
    strict_utf8: bool = redefault(
        False,
        "Beyond the original: stop at bytes of the input that are not UTF-8 instead of "
        "dropping them as the original does (dropped bytes are counted in a warning per file).",
    )
    masking_rates: str = option(
        "0.8,0.1,0.1",
        "Beyond the original: how often a masked-LM prediction's input is [MASK], the same "
        "token and a random token (MASK,SAME,RND fractions summing to 1; paper Table 8). The "
        "default is the original's 80/10/10 and writes the original's records.",
        lambda name, value: parse_masking_rates(value, f"--{name}"),
    )

    def check(self) -> None:
        super().check()
        if self.max_predictions_per_seq > self.max_seq_length:
            raise InputError(
                f"--max_predictions_per_seq={self.max_predictions_per_seq}, expected 1 to "
                f"--max_seq_length={self.max_seq_length}"
            )
        if not 0.0 < self.masked_lm_prob <= 1.0:
            raise InputError(f"--masked_lm_prob={self.masked_lm_prob}, expected in (0, 1]")
        if self.per_word_mask_decision and not self.do_whole_word_mask:
            raise InputError("--per_word_mask_decision needs --do_whole_word_mask")

    @functools.cached_property
    def rates(self) -> tuple[float, float, float]:
        """`masking_rates` as the (MASK, SAME, RND) fractions."""
        return parse_masking_rates(self.masking_rates)


OPTIMIZERS = ("adamw", "lamb")


@options
class PretrainingOptions(TrainingOptions, EvalOptions):
    """run_pretraining.py's flags: the original's (same names and defaults) and ours."""

    input_file: str = option(
        None, "Input TF example files (can be a glob or comma separated).", required=True
    )
    init_checkpoint: str | None = redefault(
        None,
        "Initial checkpoint (usually from a pre-trained BERT model): the original format, a "
        "bert_tf training checkpoint or a Hugging Face BERT directory.",
    )
    max_seq_length: int = redefault(
        128,
        "The maximum total input sequence length after WordPiece tokenization. Must match "
        "the data.",
    )
    max_predictions_per_seq: int = option(
        20,
        "Maximum number of masked LM predictions per sequence. Must match the data.",
        positive,
    )
    num_train_steps: int = option(100000, "Number of training steps.", positive)
    num_warmup_steps: int = option(10000, "Number of warmup steps.", non_negative)
    max_eval_steps: int = option(100, "Maximum number of eval steps.", positive)
    optimizer: str = option(
        "adamw", "adamw (the original's) or lamb (large batches).", one_of(*OPTIMIZERS)
    )
    objective: str = option(
        "mlm_nsp",
        "mlm_nsp (BERT), mlm (No NSP) or ltr (left-to-right LM, no NSP): paper Table 5.",
        one_of(*OBJECTIVES),
    )
    vocab_file: str | None = option(
        None, "Optional: copied into output_dir/pretrained/ next to the model."
    )
    do_lower_case: bool | None = option(
        None,
        "Optional: the casing the records were made with (create_pretraining_data.py's "
        "--do_lower_case), recorded beside the model (tokenizer_config.json); unset: a "
        "fine-tuning run reads it from the vocab.",
    )
    eval_input_file: str | None = option(
        None,
        "Held-out records for --do_eval (a glob or comma separated); unset: --input_file, as "
        "the original. Eval reports masked_lm_perplexity (lm_perplexity for --objective=ltr).",
    )
    resume_input: bool = option(
        False,
        "Beyond the original, which reads its input from the start again when it resumes from "
        "a checkpoint: skip the global_step x train_batch_size records the checkpoint's steps "
        "read, so that a resumed run sees what an uninterrupted one would (exactly so with "
        "--seed, on one worker or several).",
    )
    keep_checkpoint_every_n_steps: int = option(
        0,
        "Also keep a copy of the checkpoint of every N-th step in output_dir/kept/ (never "
        "deleted), to fine-tune the model along the way (paper Figure 5); 0: none.",
        non_negative,
    )

    def check(self) -> None:
        super().check()
        if not (self.do_train or self.do_eval):
            raise InputError("at least one of --do_train and --do_eval must be True")
        if self.do_train and self.num_warmup_steps > self.num_train_steps:
            raise InputError(
                f"--num_warmup_steps={self.num_warmup_steps} is more than --num_train_steps="
                f"{self.num_train_steps}: the learning rate would never reach --learning_rate; "
                f"expected at most {self.num_train_steps}"
            )
