"""The masked-LM predictions of one instance (paper Sec. 3.1 Task #1 and Appendix C.2)."""

from __future__ import annotations

import random


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
) -> tuple[list[int], list[int], list[int]]:
    """Chooses the positions to predict and replaces them, drawing from `rng` as the original.

    Of the candidates (every position but [CLS] and [SEP]; whole words with whole-word masking),
    shuffled, round(len(tokens) * masked_lm_prob) positions are taken (at least 1, at most
    max_predictions_per_seq; [CLS]/[SEP] count in the length, as the original). Each is replaced
    by [MASK] 80% of the time, kept 10%, a random vocabulary word 10%.

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
                choice = _draw_choice(rng)
            if choice == _MASK:
                output_ids[index] = vocab.mask_id
            elif choice == _RANDOM:
                output_ids[index] = random_ids[rng.randint(0, last_random)]
            masked.append(index)
    masked.sort()
    return output_ids, masked, [token_ids[index] for index in masked]


_MASK, _KEEP, _RANDOM = 0, 1, 2


def _draw_choice(rng: random.Random) -> int:
    """[MASK] 80% of the time, keep 10%, random word 10%: the original's two draws."""
    if rng.random() < 0.8:
        return _MASK
    return _KEEP if rng.random() < 0.5 else _RANDOM
