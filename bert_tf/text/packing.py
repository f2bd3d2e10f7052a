"""Packing one or two tokenized texts into BERT's input, as the original's fine-tuning
scripts do: `[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`, truncated and zero-padded."""

from __future__ import annotations


def truncate_seq_pair(tokens_a: list, tokens_b: list, max_length: int) -> None:
    """Pops from the end of the longer list until the pair fits (ties go to B), in place.

    As the original's fine-tuning truncation: deterministic, unlike pre-training's random one.
    """
    while len(tokens_a) + len(tokens_b) > max_length:
        longer = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        longer.pop()


def pack_tokens(
    tokens_a: list[str], tokens_b: list[str] | None, seq_length: int
) -> tuple[list[str], list[int]]:
    """(tokens, segment ids) of `[CLS] A [SEP] (B [SEP])`, at most `seq_length` long.

    As the original, an empty or missing B packs A alone (with room for one [SEP]).
    """
    tokens_a = list(tokens_a)
    tokens_b = list(tokens_b or [])
    if tokens_b:
        truncate_seq_pair(tokens_a, tokens_b, seq_length - 3)  # [CLS], [SEP], [SEP]
    else:
        tokens_a = tokens_a[: seq_length - 2]  # [CLS], [SEP]
    tokens = ["[CLS]", *tokens_a, "[SEP]"]
    segment_ids = [0] * len(tokens)
    if tokens_b:
        tokens += [*tokens_b, "[SEP]"]
        segment_ids += [1] * (len(tokens_b) + 1)
    return tokens, segment_ids


def pad_inputs(
    input_ids: list[int], segment_ids: list[int], seq_length: int
) -> tuple[list[int], list[int], list[int]]:
    """(input_ids, input_mask, segment_ids), each zero-padded to `seq_length`."""
    padding = [0] * (seq_length - len(input_ids))
    return input_ids + padding, [1] * len(input_ids) + padding, segment_ids + padding
