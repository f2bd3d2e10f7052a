"""Examples to model inputs, and the TFRecord files in between, as the original's
run_classifier.py writes them (`train.tf_record`, `eval.tf_record`, `predict.tf_record` with
the features input_ids, input_mask, segment_ids, label_ids and is_real_example)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence

from bert_tf.classification.processors import InputExample
from bert_tf.io.tfrecord import MODEL_INPUTS, RecordSchema, int64_features
from bert_tf.text.packing import pack_tokens, pad_inputs
from bert_tf.tokenization import FullTokenizer


@dataclasses.dataclass
class InputFeatures:
    input_ids: list[int]  # [max_seq_length], zero-padded
    input_mask: list[int]  # [max_seq_length], 1 = real token
    segment_ids: list[int]  # [max_seq_length]
    label_id: int | float  # the label's index in the task's labels; the score for regression
    is_real_example: bool = True  # False: padding to fill the last batch (its outputs dropped)


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


def record_schema(max_seq_length: int, regression: bool = False) -> RecordSchema:
    """The original's records: input_ids, input_mask, segment_ids [S], label_ids (a float for
    regression) and is_real_example."""
    return RecordSchema(
        {
            **int64_features(MODEL_INPUTS, (max_seq_length,)),
            "label_ids": ((), "float32" if regression else "int64"),
            "is_real_example": ((), "int64"),
        }
    )


def record_values(features: InputFeatures) -> dict:
    return {
        **{name: getattr(features, name) for name in MODEL_INPUTS},
        "label_ids": features.label_id,
        "is_real_example": features.is_real_example,
    }
