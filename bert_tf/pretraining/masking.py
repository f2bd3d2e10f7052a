"""The masked-LM predictions of one instance (paper Sec. 3.1 Task #1 and Appendix C.2)."""

from __future__ import annotations

import math
import random

from bert_tf.errors import InputError

# The paper's MASK/SAME/RND rates (Appendix C.2, Table 8): a prediction's input token is
# [MASK] 80% of the time, the same token 10%, a random token 10%.
MASKING_RATES = (0.8, 0.1, 0.1)


class MaskingVocab:
    """What masking needs to know of the vocabulary, by id.

    Args:
        vocab: token -> id (FullTokenizer.vocab).
        do_whole_word_mask: mask all pieces of a word together (a "##" piece joins the previous).
    """

    def __init__(self, vocab: dict[str, int], do_whole_word_mask: bool = False) -> None:
        self.cls_id = vocab["[CLS]"]
        self.sep_id = vocab["[SEP]"]
        self.mask_id = vocab["[MASK]"]
        # As the original: a random replacement is `vocab_words[randint]` over the vocab's keys
        # in file order, special tokens and [unused*] included.
        self.random_word_ids = [vocab[word] for word in vocab]
        self.is_continuation = None
        if do_whole_word_mask:
            size = max(vocab.values()) + 1
            self.is_continuation = [False] * size
            for word, index in vocab.items():
                if word.startswith("##"):
                    self.is_continuation[index] = True


def create_masked_lm_predictions(
    token_ids: list[int],
    masked_lm_prob: float,
    max_predictions_per_seq: int,
    vocab: MaskingVocab,
    rng: random.Random,
    per_word_decision: bool = False,
    masking_rates: tuple[float, float, float] = MASKING_RATES,
) -> tuple[list[int], list[int], list[int]]:
    """Chooses the positions to predict and replaces them, drawing from `rng` as the original.

    Of the candidates (every position but [CLS] and [SEP]; whole words with whole-word masking),
    shuffled, round(len(tokens) * masked_lm_prob) positions are taken (at least 1, at most
    max_predictions_per_seq; [CLS]/[SEP] count in the length, as the original). Each is replaced
    by [MASK], kept, or replaced by a random vocabulary word at `masking_rates` (MASK, SAME,
    RND; the paper's 80/10/10 by default).

    As the original, the 80/10/10 decision is made per WordPiece even with whole-word masking;
    `per_word_decision=True` makes it once per word instead (google-research/bert#910).

    Returns: (output_ids, masked_lm_positions, masked_lm_ids), positions sorted.
    """
    is_continuation = vocab.is_continuation
    cand_indexes: list[list[int]] = []
    for i, token_id in enumerate(token_ids):
        if token_id == vocab.cls_id or token_id == vocab.sep_id:
            continue
        if is_continuation is not None and cand_indexes and is_continuation[token_id]:
            cand_indexes[-1].append(i)
        else:
            cand_indexes.append([i])
    rng.shuffle(cand_indexes)

    output_ids = list(token_ids)
    # Python 3's round() rounds half to even, as the original did when run under Python 3.
    num_to_predict = min(
        max_predictions_per_seq, max(1, int(round(len(token_ids) * masked_lm_prob)))
    )
    random_ids = vocab.random_word_ids
    last_random = len(random_ids) - 1
    masked: list[int] = []
    for index_set in cand_indexes:
        if len(masked) >= num_to_predict:
            break
        # As the original: a word that would overshoot the budget is skipped, not truncated.
        # (The original also skips groups with an already-covered index; groups never overlap,
        # so that check cannot fire and is left out.)
        if len(masked) + len(index_set) > num_to_predict:
            continue
        choice = None
        for index in index_set:
            if choice is None or not per_word_decision:
                choice = _draw_choice(rng, masking_rates)
            if choice == _MASK:
                output_ids[index] = vocab.mask_id
            elif choice == _RANDOM:
                output_ids[index] = random_ids[rng.randint(0, last_random)]
            masked.append(index)
    masked.sort()
    return output_ids, masked, [token_ids[index] for index in masked]


_MASK, _KEEP, _RANDOM = 0, 1, 2


def _draw_choice(rng: random.Random, rates: tuple[float, float, float]) -> int:
    """[MASK], keep or random word at `rates`, drawn as the original draws 80/10/10: one draw
    against the [MASK] rate, then one that splits the rest between keeping and a random word
    (so the default rates give the original's records, draw for draw)."""
    mask, same, rnd = rates
    if rng.random() < mask:
        return _MASK
    keep_share = same / (same + rnd) if same + rnd > 0 else 1.0
    return _KEEP if rng.random() < keep_share else _RANDOM


def parse_masking_rates(text: str, flag: str = "--masking_rates") -> tuple[float, float, float]:
    """Parses "0.8,0.1,0.1" into (0.8, 0.1, 0.1): three fractions (MASK, SAME, RND) that sum to 1.

    Raises:
        InputError: not three numbers, a negative one, or a sum other than 1.
    """
    expected = "three fractions MASK,SAME,RND that sum to 1, e.g. 0.8,0.1,0.1"
    try:
        rates = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise InputError(f"{flag}={text}; expected {expected}") from None
    if (
        len(rates) != 3
        or not all(math.isfinite(rate) and rate >= 0 for rate in rates)
        or abs(sum(rates) - 1) > 1e-6
    ):
        raise InputError(f"{flag}={text}; expected {expected}")
    return rates
