"""bert_tf.extraction.features: reading lines, packing them as the original does, and the JSON
lines.

The packing and the output format are the original's `extract_features.py` (google-research/bert):
`[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]` with segment ids 0 then 1, zero padding, the
deterministic pair truncation, and `{"linex_index": ..., "features": [...]}` with values rounded
to 6 decimals.
"""

from __future__ import annotations

import json
from pathlib import Path

import keras
import numpy as np
import pytest
from conftest import tiny_config_dict

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.extraction.features import (
    InputExample,
    InputFeatures,
    convert_examples_to_features,
    extract,
    feature_json,
    parse_layer_indexes,
    read_examples,
)
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.text.packing import truncate_seq_pair
from bert_tf.tokenization import FullTokenizer

# Ids are positions: [PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3, "is"=5, ...
VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
    "is", "this", "jack", "##son", "##ville", "?", "no", "it", "not", ".",
    "the", "dog", "hairy", "a", "cat",
]  # fmt: skip


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> FullTokenizer:
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("".join(token + "\n" for token in VOCAB), encoding="utf-8")
    return FullTokenizer(str(path), do_lower_case=True)


def _write_lines(path: Path, text: str) -> str:
    path.write_bytes(text.encode("utf-8"))
    return str(path)


# --- read_examples ---------------------------------------------------------------------------


def test_each_line_is_one_example_numbered_by_line(tmp_path: Path) -> None:
    path = _write_lines(
        tmp_path / "input.txt",
        "  The dog is hairy.  \n"
        "Is this jacksonville? ||| No it is not.\n"
        "\n"
        "a ||| b ||| c\n"
        "a|||b\n"
        "tail ||| \n",
    )
    examples = read_examples(path)
    assert examples == [
        InputExample(0, "The dog is hairy.", None),
        InputExample(1, "Is this jacksonville?", "No it is not."),
        InputExample(2, "", None),  # a blank line in the middle is an (empty) example
        InputExample(3, "a ||| b", "c"),  # the original's greedy regex splits at the last " ||| "
        InputExample(4, "a|||b", None),  # the separator needs its spaces
        InputExample(5, "tail |||", None),  # stripped before matching, so no empty text_b
    ]


def test_last_line_without_newline_is_read(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "input.txt", "first\nsecond")
    assert read_examples(path) == [InputExample(0, "first"), InputExample(1, "second")]


def test_empty_input_file_is_an_input_error_naming_the_flag(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "empty.txt", "")
    with pytest.raises(InputError, match="--input_file") as error:
        read_examples(path)
    assert path in str(error.value)
    assert "empty" in str(error.value)


def test_missing_input_file_is_an_input_error_naming_the_flag(tmp_path: Path) -> None:
    path = str(tmp_path / "nowhere.txt")
    with pytest.raises(InputError, match="--input_file") as error:
        read_examples(path)
    assert path in str(error.value)


# --- convert_examples_to_features ------------------------------------------------------------


def test_single_text_is_cls_a_sep_with_segment_0_and_zero_padding(tokenizer) -> None:
    [feature] = convert_examples_to_features(
        [InputExample(7, "The dog is hairy.")], seq_length=10, tokenizer=tokenizer
    )
    assert feature == InputFeatures(
        unique_id=7,
        tokens=["[CLS]", "the", "dog", "is", "hairy", ".", "[SEP]"],
        input_ids=[2, 15, 16, 5, 17, 14, 3, 0, 0, 0],
        input_mask=[1, 1, 1, 1, 1, 1, 1, 0, 0, 0],
        input_type_ids=[0] * 10,
    )


def test_pair_is_cls_a_sep_b_sep_with_segments_0_then_1(tokenizer) -> None:
    # The original's own example (extract_features.py, "The convention in BERT is").
    [feature] = convert_examples_to_features(
        [InputExample(0, "is this jacksonville ?", "no it is not .")],
        seq_length=16,
        tokenizer=tokenizer,
    )
    assert feature.tokens == [
        "[CLS]", "is", "this", "jack", "##son", "##ville", "?", "[SEP]",
        "no", "it", "is", "not", ".", "[SEP]",
    ]  # fmt: skip
    assert feature.input_ids == [2, 5, 6, 7, 8, 9, 10, 3, 11, 12, 5, 13, 14, 3, 0, 0]
    assert feature.input_type_ids == [0] * 8 + [1] * 6 + [0, 0]
    assert feature.input_mask == [1] * 14 + [0, 0]


def test_single_text_is_truncated_to_max_seq_length_minus_2(tokenizer) -> None:
    [feature] = convert_examples_to_features(
        [InputExample(0, "the dog is hairy .")], seq_length=5, tokenizer=tokenizer
    )
    assert feature.tokens == ["[CLS]", "the", "dog", "is", "[SEP]"]
    assert feature.input_ids == [2, 15, 16, 5, 3]
    assert feature.input_mask == [1] * 5


def test_pair_is_truncated_from_the_end_of_the_longer_text(tokenizer) -> None:
    # 5 + 2 tokens into 8 - 3 = 5: A loses its last two.
    [feature] = convert_examples_to_features(
        [InputExample(0, "the dog is hairy .", "no it")], seq_length=8, tokenizer=tokenizer
    )
    assert feature.tokens == ["[CLS]", "the", "dog", "is", "[SEP]", "no", "it", "[SEP]"]
    assert feature.input_type_ids == [0, 0, 0, 0, 0, 1, 1, 1]
    assert feature.input_mask == [1] * 8


def test_pair_whose_b_has_no_tokens_is_packed_as_a_single_text(tokenizer) -> None:
    # "\u200b" (zero-width space, a format character) is removed by the tokenizer.
    [feature] = convert_examples_to_features(
        [InputExample(0, "the dog is hairy .", "\u200b")], seq_length=6, tokenizer=tokenizer
    )
    assert feature.tokens == ["[CLS]", "the", "dog", "is", "hairy", "[SEP]"]
    assert feature.input_type_ids == [0] * 6


def test_truncate_seq_pair_ties_pop_from_b() -> None:
    tokens_a, tokens_b = ["a1", "a2", "a3"], ["b1", "b2", "b3"]
    truncate_seq_pair(tokens_a, tokens_b, 5)
    assert (tokens_a, tokens_b) == (["a1", "a2", "a3"], ["b1", "b2"])
    truncate_seq_pair(tokens_a, tokens_b, 2)
    assert (tokens_a, tokens_b) == (["a1"], ["b1"])


def test_truncate_seq_pair_pops_the_longer_until_it_fits() -> None:
    tokens_a, tokens_b = ["a1", "a2", "a3", "a4", "a5"], ["b1", "b2"]
    truncate_seq_pair(tokens_a, tokens_b, 4)
    assert (tokens_a, tokens_b) == (["a1", "a2"], ["b1", "b2"])
    tokens_a, tokens_b = ["a1"], ["b1", "b2", "b3", "b4"]
    truncate_seq_pair(tokens_a, tokens_b, 10)  # already fits: untouched
    assert (tokens_a, tokens_b) == (["a1"], ["b1", "b2", "b3", "b4"])


# --- parse_layer_indexes ---------------------------------------------------------------------


def test_layers_flag_is_parsed_in_the_given_order() -> None:
    assert parse_layer_indexes("-1,-2,-3,-4", 12) == [-1, -2, -3, -4]
    assert parse_layer_indexes("0,11,-12", 12) == [0, 11, -12]
    assert parse_layer_indexes("-1", 2) == [-1]


@pytest.mark.parametrize("layers", ["2", "-3", "-1,-2,-3,-4"])
def test_layer_outside_the_model_is_an_input_error(layers: str) -> None:
    with pytest.raises(InputError, match="--layers") as error:
        parse_layer_indexes(layers, 2)
    assert "num_hidden_layers=2" in str(error.value)


@pytest.mark.parametrize("layers", ["last", "-1;-2", "", "-1.0"])
def test_layers_that_are_not_integers_are_an_input_error(layers: str) -> None:
    with pytest.raises(InputError, match="--layers"):
        parse_layer_indexes(layers, 12)


# --- extract and feature_json ----------------------------------------------------------------

LINES = [
    "the dog is hairy .",
    "is this jacksonville ? ||| no it is not .",
    "a cat",
    "",
    "the cat is not a dog ||| is it ?",
]
LAYERS = [-1, 0, 1]
SEQ_LENGTH = 16


@pytest.fixture(scope="module")
def encoder() -> BertEncoder:
    keras.utils.set_random_seed(7)
    return BertEncoder(BertConfig(**tiny_config_dict(vocab_size=len(VOCAB), num_hidden_layers=3)))


@pytest.fixture(scope="module")
def features(tmp_path_factory: pytest.TempPathFactory, tokenizer) -> list[InputFeatures]:
    path = _write_lines(tmp_path_factory.mktemp("input") / "input.txt", "\n".join(LINES) + "\n")
    return convert_examples_to_features(read_examples(path), SEQ_LENGTH, tokenizer)


def _encoder_layers(encoder: BertEncoder, features: list[InputFeatures]) -> np.ndarray:
    """The encoder's own `encoder_outputs` for `features`, one call: [B, num_layers, S, H]."""
    outputs = encoder(
        {
            "input_ids": np.array([f.input_ids for f in features], np.int32),
            "input_mask": np.array([f.input_mask for f in features], np.int32),
            "segment_ids": np.array([f.input_type_ids for f in features], np.int32),
        },
        training=False,
    )["encoder_outputs"]
    return np.stack([np.asarray(layer) for layer in outputs], axis=1)


def test_extract_yields_every_example_once_in_order_with_a_ragged_last_batch(
    encoder, features
) -> None:
    results = list(extract(encoder, features, LAYERS, batch_size=2))  # 5 examples: 2 + 2 + 1
    assert [feature.unique_id for feature, _ in results] == [0, 1, 2, 3, 4]
    assert all(
        feature is original for (feature, _), original in zip(results, features, strict=True)
    )
    for _, values in results:
        assert values.shape == (len(LAYERS), SEQ_LENGTH, 32)


def test_extracted_values_are_the_encoders_layer_outputs(encoder, features) -> None:
    expected = _encoder_layers(encoder, features)  # [B, all layers, S, H]
    for batch_size in (1, 3, 8):
        results = list(extract(encoder, features, LAYERS, batch_size=batch_size))
        for i, (_, values) in enumerate(results):
            np.testing.assert_allclose(values, expected[i, LAYERS], rtol=0, atol=1e-6)


def test_json_line_holds_each_real_tokens_layers_as_the_encoder_computes_them(
    encoder, features
) -> None:
    expected = _encoder_layers(encoder, features)
    for feature, values in extract(encoder, features, LAYERS, batch_size=2):
        line = feature_json(feature, LAYERS, values)
        assert "\n" not in line
        record = json.loads(line)
        assert list(record) == ["linex_index", "features"]
        assert record["linex_index"] == feature.unique_id
        # One entry per real token, padding left out.
        assert [token["token"] for token in record["features"]] == feature.tokens
        assert len(record["features"]) == sum(feature.input_mask)
        for position, token in enumerate(record["features"]):
            assert list(token) == ["token", "layers"]
            assert [layer["index"] for layer in token["layers"]] == LAYERS
            for layer in token["layers"]:
                assert list(layer) == ["index", "values"]
                values_written = np.array(layer["values"])
                reference = expected[feature.unique_id, layer["index"], position]
                np.testing.assert_allclose(values_written, reference, rtol=0, atol=1e-6)
                assert all(round(x, 6) == x for x in layer["values"])


def test_feature_json_is_the_originals_format_rounded_to_6_decimals() -> None:
    feature = InputFeatures(
        unique_id=3,
        tokens=["[CLS]", "hi", "[SEP]"],
        input_ids=[2, 9, 3, 0],
        input_mask=[1, 1, 1, 0],
        input_type_ids=[0, 0, 0, 0],
    )
    values = np.array(
        [
            [[0.12345678, -2.0], [1.5, 0.0000004], [-0.9999996, 3.25], [9.0, 9.0]],
            [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [9.0, 9.0]],
        ],
        np.float32,
    )  # [2 layers, S=4, H=2]; the last position is padding
    line = feature_json(feature, [-1, -2], values)
    assert line.startswith('{"linex_index": 3, "features": [{"token": "[CLS]", "layers": [')
    assert json.loads(line) == {
        "linex_index": 3,
        "features": [
            {
                "token": "[CLS]",
                "layers": [
                    {"index": -1, "values": [0.123457, -2.0]},
                    {"index": -2, "values": [1.0, 2.0]},
                ],
            },
            {
                "token": "hi",
                "layers": [
                    {"index": -1, "values": [1.5, 0.0]},
                    {"index": -2, "values": [3.0, 4.0]},
                ],
            },
            {
                "token": "[SEP]",
                "layers": [
                    {"index": -1, "values": [-1.0, 3.25]},
                    {"index": -2, "values": [5.0, 6.0]},
                ],
            },
        ],
    }
