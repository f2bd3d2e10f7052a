"""The options of pre-training data generation (create_pretraining_data.py's flags), with the
original's defaults."""

from __future__ import annotations

import functools

from bert_tf.errors import InputError
from bert_tf.fileio import TextInputOptions
from bert_tf.options import at_least, option, options, positive, proportion, redefault
from bert_tf.pretraining.masking import parse_masking_rates


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
