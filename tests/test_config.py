"""BertConfig reads and writes the original bert_config.json."""

from __future__ import annotations

import json
import logging

import pytest
from conftest import ORACLE_FIXTURES, tiny_config_dict

from bert_tf.config import DEFAULTS, HIDDEN_ACTS, BertConfig
from bert_tf.errors import InputError
from bert_tf.modeling.activations import ACTIVATIONS


def test_reads_the_original_json():
    config = BertConfig.from_json_file(ORACLE_FIXTURES / "model" / "bert_config.json")
    assert config.vocab_size == 512
    assert config.hidden_size == 32
    assert config.num_hidden_layers == 2
    assert config.num_attention_heads == 4
    assert config.size_per_head == 8
    assert config.hidden_act == "gelu"
    assert config.initializer_range == 0.2


def test_defaults_are_the_originals():
    config = BertConfig(vocab_size=99)
    assert config.to_dict() == {"vocab_size": 99, **DEFAULTS}
    assert config.type_vocab_size == 16  # the original's default; released configs say 2


def test_json_round_trip_keeps_unknown_keys(tmp_path):
    values = tiny_config_dict(directionality="bidi", pooler_type="first_token_transform")
    path = tmp_path / "bert_config.json"
    BertConfig.from_dict(values).to_json_file(path)
    written = json.loads(path.read_text())
    assert written == values
    assert BertConfig.from_json_file(path).extra == {
        "directionality": "bidi",
        "pooler_type": "first_token_transform",
    }


def test_json_string_is_indented_and_sorted_as_the_original():
    text = BertConfig(vocab_size=99, hidden_size=37, num_attention_heads=1).to_json_string()
    assert text.startswith('{\n  "attention_probs_dropout_prob": 0.1,\n')
    assert json.loads(text)["hidden_size"] == 37


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(hidden_size=30, num_attention_heads=4), "hidden_size=30 is not a multiple of"),
        (dict(hidden_act="swish"), "hidden_act='swish', expected one of gelu"),
        (dict(num_hidden_layers=0), "num_hidden_layers=0, expected a positive integer"),
        (dict(hidden_size="768"), "hidden_size='768', expected a positive integer"),
        (dict(hidden_dropout_prob=1.0), "hidden_dropout_prob=1.0, expected a probability"),
        (dict(initializer_range=-1), "initializer_range=-1, expected a positive number"),
    ],
)
def test_bad_values_name_the_file_key_and_expectation(tmp_path, overrides, message):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(tiny_config_dict(**overrides)))
    with pytest.raises(InputError) as error:
        BertConfig.from_json_file(path)
    assert str(error.value).startswith(str(path))
    assert message in str(error.value)


def test_missing_vocab_size_is_an_error():
    with pytest.raises(InputError, match="vocab_size is missing"):
        BertConfig.from_dict({"hidden_size": 32})


def test_missing_and_malformed_files_are_named(tmp_path):
    with pytest.raises(InputError, match="nope.json: no such bert_config.json"):
        BertConfig.from_json_file(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="bad.json: not valid JSON"):
        BertConfig.from_json_file(bad)


def test_vocab_larger_than_the_embedding_table_is_an_error():
    config = BertConfig(**tiny_config_dict())
    config.check_vocab(99, "vocab.txt")
    with pytest.raises(InputError, match="vocab.txt: the vocabulary has 100 tokens"):
        config.check_vocab(100, "vocab.txt")


def test_every_hidden_act_has_a_function():
    assert set(HIDDEN_ACTS) == set(ACTIVATIONS)


def test_a_file_missing_keys_says_which_defaults_it_takes(tmp_path, caplog):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps({"vocab_size": 99, "hidden_size": 32, "num_attention_heads": 4}))
    with caplog.at_level(logging.WARNING):
        config = BertConfig.from_json_file(path)
    assert config.num_hidden_layers == 12  # as the original: BERT-Base's default
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning.startswith(f"{path} has no num_hidden_layers, intermediate_size, hidden_act, ")
    assert "using the original's defaults: num_hidden_layers=12, intermediate_size=3072" in warning
    caplog.clear()
    config.to_json_file(tmp_path / "whole.json")
    BertConfig.from_json_file(tmp_path / "whole.json")
    assert not caplog.records  # a whole file: not a word


def test_equal_configs_are_one_key():
    a = BertConfig(vocab_size=99, hidden_size=48)
    b = BertConfig.from_dict(a.to_dict())
    assert {a: "shape"}[b] == "shape"
    assert len({a, b, a.replace(hidden_size=96)}) == 2
