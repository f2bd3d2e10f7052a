"""Examples to model inputs, and the TFRecord files in between, as the original's
run_classifier.py writes them (`train.tf_record`, `eval.tf_record`, `predict.tf_record` with
the features input_ids, input_mask, segment_ids, label_ids and is_real_example)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence

import tensorflow as tf

from bert_tf.classification.processors import InputExample
from bert_tf.packing import pack_tokens, pad_inputs
from bert_tf.tfrecord import encode_example
from bert_tf.tokenization import FullTokenizer


@dataclasses.dataclass
class InputFeatures:
    input_ids: list[int]  # [max_seq_length], zero-padded
    input_mask: list[int]  # [max_seq_length], 1 = real token
    segment_ids: list[int]  # [max_seq_length]
    label_id: int | float  # the label's index in the task's labels; the score for regression
    is_real_example: bool = True  # False: padding to fill the last batch (its outputs dropped)


def padding_features(max_seq_length: int, regression: bool = False) -> InputFeatures:
    """The original's PaddingInputExample: all zeros, not a real example."""
    zeros = [0] * max_seq_length
    return InputFeatures(zeros, zeros, zeros, 0.0 if regression else 0, is_real_example=False)


def convert_single_example(
    example: InputExample,
    label_list: Sequence[str] | None,
    max_seq_length: int,
    tokenizer: FullTokenizer,
) -> InputFeatures:
    """Tokenizes, packs `[CLS] A [SEP] (B [SEP])` (popping from the end of the longer text
    to fit) and pads. `label_list` None: regression (the label is the float score)."""
    tokens_a = tokenizer.tokenize(example.text_a)
    tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else None
    tokens, segment_ids = pack_tokens(tokens_a, tokens_b, max_seq_length)
    input_ids, input_mask, segment_ids = pad_inputs(
        tokenizer.convert_tokens_to_ids(tokens), segment_ids, max_seq_length
    )
    if label_list is None:
        label_id = float(example.label if example.label is not None else 0.0)
    else:
        label_id = list(label_list).index(example.label) if example.label is not None else 0
    return InputFeatures(input_ids, input_mask, segment_ids, label_id)


def convert_examples_to_features(
    examples: Iterable[InputExample],
    label_list: Sequence[str] | None,
    max_seq_length: int,
    tokenizer: FullTokenizer,
) -> Iterator[InputFeatures]:
    """The features of each example, lazily (MNLI's 393k training examples go to the
    TFRecord file one at a time)."""
    for example in examples:
        yield convert_single_example(example, label_list, max_seq_length, tokenizer)


def serialize_features(features: InputFeatures) -> bytes:
    ints = {
        "input_ids": features.input_ids,
        "input_mask": features.input_mask,
        "segment_ids": features.segment_ids,
    }
    floats = {}
    if isinstance(features.label_id, float):
        floats["label_ids"] = [features.label_id]
    else:
        ints["label_ids"] = [features.label_id]
    ints["is_real_example"] = [int(features.is_real_example)]
    return encode_example(ints, floats)


def feature_spec(max_seq_length: int, regression: bool = False) -> dict:
    """The records' features: input_ids, input_mask, segment_ids [S], label_ids (a float for
    regression) and is_real_example."""
    return {
        "input_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "input_mask": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "label_ids": tf.io.FixedLenFeature([], tf.float32 if regression else tf.int64),
        "is_real_example": tf.io.FixedLenFeature([], tf.int64),
    }
