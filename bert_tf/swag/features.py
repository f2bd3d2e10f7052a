"""SWAG examples to model inputs, and the TFRecord files in between (`train.tf_record`,
`eval.tf_record`, `predict.tf_record`): per example, the 4 packed sequences
`[CLS] sent1 [SEP] sent2 ending_i [SEP]` as input_ids, input_mask and segment_ids [4, S], the
label_ids and is_real_example, as run_classifier.py writes one sequence."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

from bert_tf.io.tfrecord import MODEL_INPUTS, RecordSchema, int64_features
from bert_tf.swag.data import NUM_CHOICES, SwagExample
from bert_tf.text.packing import pack_tokens, pad_inputs
from bert_tf.tokenization import FullTokenizer


@dataclasses.dataclass
class SwagFeatures:
    input_ids: list[list[int]]  # [NUM_CHOICES, max_seq_length], zero-padded
    input_mask: list[list[int]]  # [NUM_CHOICES, max_seq_length], 1 = real token
    segment_ids: list[list[int]]  # [NUM_CHOICES, max_seq_length]
    label_id: int  # the index of the right ending (0 for test examples)
    is_real_example: bool = True  # False: padding to fill the last batch (its outputs dropped)


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


def record_schema(max_seq_length: int) -> RecordSchema:
    """Each choice's input_ids, input_mask, segment_ids [NUM_CHOICES, S] (written row-major),
    label_ids and is_real_example."""
    return RecordSchema(
        {
            **int64_features(MODEL_INPUTS, (NUM_CHOICES, max_seq_length)),
            **int64_features(("label_ids", "is_real_example"), ()),
        }
    )


def record_values(features: SwagFeatures) -> dict:
    return {
        **{name: getattr(features, name) for name in MODEL_INPUTS},
        "label_ids": features.label_id,
        "is_real_example": features.is_real_example,
    }
