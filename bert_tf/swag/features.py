"""SWAG examples to model inputs, and the TFRecord files in between (`train.tf_record`,
`eval.tf_record`, `predict.tf_record`): per example, the 4 packed sequences
`[CLS] sent1 [SEP] sent2 ending_i [SEP]` as input_ids, input_mask and segment_ids [4, S], the
label_ids and is_real_example, as run_classifier.py writes one sequence."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

import tensorflow as tf

from bert_tf.packing import pack_tokens, pad_inputs
from bert_tf.swag.data import NUM_CHOICES, SwagExample
from bert_tf.tfrecord import encode_example
from bert_tf.tokenization import FullTokenizer


@dataclasses.dataclass
class SwagFeatures:
    input_ids: list[list[int]]  # [NUM_CHOICES, max_seq_length], zero-padded
    input_mask: list[list[int]]  # [NUM_CHOICES, max_seq_length], 1 = real token
    segment_ids: list[list[int]]  # [NUM_CHOICES, max_seq_length]
    label_id: int  # the index of the right ending (0 for test examples)
    is_real_example: bool = True  # False: padding to fill the last batch (its outputs dropped)


def padding_features(max_seq_length: int) -> SwagFeatures:
    """All zeros, not a real example (the original classifier's PaddingInputExample)."""
    zeros = [[0] * max_seq_length for _ in range(NUM_CHOICES)]
    return SwagFeatures(zeros, zeros, zeros, 0, is_real_example=False)


def convert_single_example(
    example: SwagExample, max_seq_length: int, tokenizer: FullTokenizer
) -> SwagFeatures:
    """Packs `[CLS] A [SEP] B_i [SEP]` for each choice i, popping tokens from the end of the
    longer of A and B_i until the pair fits (the original's `_truncate_seq_pair`), and pads."""
    context_tokens = tokenizer.tokenize(example.context_sentence)
    columns: dict[str, list[list[int]]] = {"input_ids": [], "input_mask": [], "segment_ids": []}
    for choice in example.choices:
        tokens, segment_ids = pack_tokens(
            context_tokens, tokenizer.tokenize(choice), max_seq_length
        )
        padded = pad_inputs(tokenizer.convert_tokens_to_ids(tokens), segment_ids, max_seq_length)
        for name, values in zip(columns, padded, strict=True):
            columns[name].append(values)
    label = example.label if example.label is not None else 0
    return SwagFeatures(**columns, label_id=label)


def convert_examples_to_features(
    examples: Iterable[SwagExample], max_seq_length: int, tokenizer: FullTokenizer
) -> Iterator[SwagFeatures]:
    """The features of each example, lazily (SWAG's 73k training examples are 37M ids at
    128 tokens: they go to the TFRecord file one at a time)."""
    for example in examples:
        yield convert_single_example(example, max_seq_length, tokenizer)


def serialize_features(features: SwagFeatures) -> bytes:
    # [NUM_CHOICES, S] flattened row-major; `feature_spec` reads it back as [NUM_CHOICES, S].
    return encode_example(
        {
            "input_ids": [i for ids in features.input_ids for i in ids],
            "input_mask": [m for mask in features.input_mask for m in mask],
            "segment_ids": [s for segments in features.segment_ids for s in segments],
            "label_ids": [features.label_id],
            "is_real_example": [int(features.is_real_example)],
        },
        {},
    )


def feature_spec(max_seq_length: int) -> dict:
    shape = [NUM_CHOICES, max_seq_length]
    return {
        "input_ids": tf.io.FixedLenFeature(shape, tf.int64),
        "input_mask": tf.io.FixedLenFeature(shape, tf.int64),
        "segment_ids": tf.io.FixedLenFeature(shape, tf.int64),
        "label_ids": tf.io.FixedLenFeature([], tf.int64),
        "is_real_example": tf.io.FixedLenFeature([], tf.int64),
    }
