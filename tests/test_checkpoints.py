"""Original TF1 checkpoints are read and written by the original variable names."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import tensorflow as tf
from conftest import ORACLE_FIXTURES, tiny_config_dict

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.model_io.checkpoints import resolve_checkpoint_path, save_original_checkpoint
from bert_tf.model_io.loading import load_checkpoint
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.pretrainer import BertPretrainer


def oracle_config() -> BertConfig:
    return BertConfig.from_json_file(ORACLE_FIXTURES / "model" / "bert_config.json")


def write_checkpoint(prefix, tensors: dict) -> str:
    """A TF1 name-based checkpoint holding exactly `tensors`, as other tools write them."""
    names = sorted(tensors)
    tf.raw_ops.SaveV2(
        prefix=str(prefix),
        tensor_names=names,
        shape_and_slices=[""] * len(names),
        tensors=[tf.constant(tensors[n]) for n in names],
    )
    return str(prefix)


def checkpoint_tensors(prefix) -> dict:
    reader = tf.train.load_checkpoint(str(prefix))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def test_loads_original_checkpoint_names(oracle_checkpoint):
    model = BertPretrainer(oracle_config())
    report = load_checkpoint(model, oracle_checkpoint)
    expected = checkpoint_tensors(oracle_checkpoint)
    assert sorted(report.loaded) == sorted(expected)  # all 46, nothing else
    assert len(report.loaded) == 46
    assert report.missing == report.unexpected == report.skipped == []
    table = model.original_variable_names()
    for name, value in expected.items():
        np.testing.assert_array_equal(table[name].numpy(), value, err_msg=name)


def test_name_table_covers_every_model_weight_once():
    model = BertPretrainer(BertConfig(**tiny_config_dict(num_hidden_layers=3)))
    table = model.original_variable_names()
    assert len(table) == len(model.weights) == 5 + 16 * 3 + 2 + 7
    assert {id(v) for v in table.values()} == {id(w) for w in model.weights}


def test_save_writes_exactly_the_original_names(tmp_path, oracle_checkpoint):
    model = BertPretrainer(oracle_config())
    load_checkpoint(model, oracle_checkpoint)
    prefix = save_original_checkpoint(model, tmp_path / "bert_model.ckpt")
    assert tf.train.list_variables(prefix) == tf.train.list_variables(oracle_checkpoint)
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bert_model.ckpt.data-00000-of-00001",
        "bert_model.ckpt.index",
        "checkpoint",
    ]


def test_round_trip_is_bit_identical(tmp_path, oracle_checkpoint):
    original = checkpoint_tensors(oracle_checkpoint)
    model = BertPretrainer(oracle_config())
    load_checkpoint(model, oracle_checkpoint)
    prefix = save_original_checkpoint(model, tmp_path / "bert_model.ckpt")
    written = checkpoint_tensors(prefix)
    assert written.keys() == original.keys()
    for name in original:
        assert written[name].dtype == original[name].dtype
        assert written[name].tobytes() == original[name].tobytes(), name

    reloaded = BertPretrainer(oracle_config())
    load_checkpoint(reloaded, prefix)
    for a, b in zip(model.weights, reloaded.weights, strict=True):
        assert a.numpy().tobytes() == b.numpy().tobytes(), a.path


def test_encoder_alone_writes_and_reads_only_bert_names(tmp_path, oracle_checkpoint):
    encoder = BertEncoder(oracle_config())
    report = load_checkpoint(encoder, oracle_checkpoint)
    assert len(report.loaded) == 39
    assert report.unexpected == sorted(
        n for n in checkpoint_tensors(oracle_checkpoint) if n.startswith("cls/")
    )
    prefix = save_original_checkpoint(encoder, tmp_path / "bert_model.ckpt")
    assert all(name.startswith("bert/") for name, _ in tf.train.list_variables(prefix))


def test_checkpoint_without_heads_loads_the_encoder_and_says_so(tmp_path, caplog):
    source = BertEncoder(oracle_config())
    prefix = save_original_checkpoint(source, tmp_path / "bert_model.ckpt")
    model = BertPretrainer(oracle_config())
    head_bias = model.masked_lm_head.output_bias.numpy()
    with caplog.at_level(logging.WARNING):
        report = load_checkpoint(model, prefix)
    assert len(report.loaded) == 39
    assert len(report.missing) == 7 and all(n.startswith("cls/") for n in report.missing)
    assert "has no cls/" in caplog.text
    np.testing.assert_array_equal(model.masked_lm_head.output_bias.numpy(), head_bias)
    np.testing.assert_array_equal(model.encoder.pooler.kernel.numpy(), source.pooler.kernel.numpy())


def test_optimizer_slots_and_global_step_are_skipped(tmp_path, oracle_checkpoint):
    tensors = checkpoint_tensors(oracle_checkpoint)
    tensors["global_step"] = np.int64(3)
    tensors["bert/pooler/dense/kernel/adam_m"] = np.zeros((32, 32), "float32")
    tensors["bert/pooler/dense/kernel/adam_v"] = np.zeros((32, 32), "float32")
    tensors["output_weights"] = np.zeros((3, 32), "float32")  # a classifier head
    prefix = write_checkpoint(tmp_path / "model.ckpt-3", tensors)
    report = load_checkpoint(BertPretrainer(oracle_config()), prefix)
    assert len(report.loaded) == 46
    assert report.skipped == [
        "bert/pooler/dense/kernel/adam_m",
        "bert/pooler/dense/kernel/adam_v",
        "global_step",
    ]
    assert report.unexpected == ["output_weights"]


def test_missing_encoder_variables_are_named(tmp_path, oracle_checkpoint):
    tensors = checkpoint_tensors(oracle_checkpoint)
    del tensors["bert/encoder/layer_1/output/dense/bias"]
    prefix = write_checkpoint(tmp_path / "bert_model.ckpt", tensors)
    with pytest.raises(
        InputError,
        match="1 of the encoder's variables are not in the checkpoint: "
        "bert/encoder/layer_1/output/dense/bias",
    ):
        load_checkpoint(BertEncoder(oracle_config()), prefix)


def test_partial_heads_are_an_error(tmp_path, oracle_checkpoint):
    tensors = checkpoint_tensors(oracle_checkpoint)
    del tensors["cls/predictions/output_bias"]
    prefix = write_checkpoint(tmp_path / "bert_model.ckpt", tensors)
    with pytest.raises(
        InputError, match="some of the model.s heads but not cls/predictions/output_bias"
    ):
        load_checkpoint(BertPretrainer(oracle_config()), prefix)


def test_a_checkpoint_with_more_layers_than_the_config_is_an_error(oracle_checkpoint):
    # The original would train with the extra layers silently left out.
    layers = oracle_config().num_hidden_layers
    config = BertConfig.from_dict({**oracle_config().to_dict(), "num_hidden_layers": 1})
    encoder = BertEncoder(config)
    before = [w.numpy() for w in encoder.weights]
    with pytest.raises(InputError) as error:
        load_checkpoint(encoder, oracle_checkpoint)
    assert str(error.value) == (
        f"{oracle_checkpoint}: has encoder layers layer_1"
        + (f" to layer_{layers - 1}" if layers > 2 else "")
        + " beyond the model's 1 (num_hidden_layers); does bert_config.json belong to this "
        "checkpoint?"
    )
    assert all((a == w.numpy()).all() for a, w in zip(before, encoder.weights, strict=True))


def test_shape_mismatch_names_the_variable_and_both_shapes(oracle_checkpoint):
    config = BertConfig.from_dict({**oracle_config().to_dict(), "intermediate_size": 48})
    with pytest.raises(InputError) as error:
        load_checkpoint(BertEncoder(config), oracle_checkpoint)
    message = str(error.value)
    assert "bert/encoder/layer_0/intermediate/dense/kernel has shape [32, 64]" in message
    assert "needs [32, 48]" in message


@pytest.mark.parametrize("suffix", ["", ".index", ".data-00000-of-00001"])
def test_checkpoint_path_forms_users_pass(suffix, oracle_checkpoint):
    assert resolve_checkpoint_path(oracle_checkpoint + suffix) == oracle_checkpoint


def test_directory_resolves_to_its_checkpoint(tmp_path, oracle_checkpoint):
    prefix = save_original_checkpoint(BertEncoder(oracle_config()), tmp_path / "bert_model.ckpt")
    assert resolve_checkpoint_path(tmp_path) == prefix


def test_missing_checkpoint_is_named(tmp_path):
    with pytest.raises(InputError, match="nowhere/bert_model.ckpt: no checkpoint found"):
        resolve_checkpoint_path(tmp_path / "nowhere" / "bert_model.ckpt")


def test_the_original_loading_path_reads_what_we_write(tmp_path, oracle_checkpoint):
    # The original builds its graph with tf.compat.v1 variables named as in modeling.py and
    # restores them with init_from_checkpoint(ckpt, {name: name}); do exactly that.
    model = BertPretrainer(oracle_config())
    load_checkpoint(model, oracle_checkpoint)
    prefix = save_original_checkpoint(model, tmp_path / "bert_model.ckpt")
    expected = checkpoint_tensors(oracle_checkpoint)
    graph = tf.Graph()
    with graph.as_default():
        variables = {
            name: tf.compat.v1.get_variable(name, shape=value.shape, dtype=tf.float32)
            for name, value in expected.items()
        }
        tf.compat.v1.train.init_from_checkpoint(prefix, {name: name for name in variables})
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            restored = session.run(variables)
    for name, value in expected.items():
        np.testing.assert_array_equal(restored[name], value, err_msg=name)


def _model(model_class: str, config: BertConfig):
    from bert_tf import modeling

    cls = getattr(modeling, model_class)
    return cls(config, num_labels=2) if model_class == "BertClassifier" else cls(config)


@pytest.mark.parametrize("model_class", ["BertEncoder", "BertClassifier", "BertPretrainer"])
def test_an_object_based_checkpoint_without_the_encoder_is_one_error_not_a_random_model(
    model_class, tmp_path
):
    import keras

    config = BertConfig.from_dict(tiny_config_dict())
    # A training checkpoint of another network: before, it loaded nothing, silently.
    other = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    tf.train.Checkpoint(model=other, encoder=other).write(str(tmp_path / "ckpt-1"))
    model = _model(model_class, config)
    before = [w.numpy() for w in model.weights]
    with pytest.raises(InputError, match=r"ckpt-1: a training checkpoint with no BERT encoder"):
        load_checkpoint(model, tmp_path / "ckpt-1")
    for weight, value in zip(model.weights, before, strict=True):
        np.testing.assert_array_equal(weight.numpy(), value)


@pytest.mark.parametrize("model_class", ["BertEncoder", "BertClassifier", "BertPretrainer"])
def test_an_object_based_checkpoint_is_read_by_keras_paths_whatever_its_keys(model_class, tmp_path):
    config = BertConfig.from_dict(tiny_config_dict())
    saved = BertEncoder(config)
    tf.train.Checkpoint(network=saved).write(str(tmp_path / "ckpt-1"))  # a user's own key
    model = _model(model_class, config)
    load_checkpoint(model, tmp_path / "ckpt-1")
    encoder = model if model_class == "BertEncoder" else model.encoder
    for weight, value in zip(encoder.weights, saved.weights, strict=True):
        np.testing.assert_array_equal(weight.numpy(), value.numpy())


def test_an_object_based_checkpoint_with_part_of_the_encoder_names_what_is_missing(tmp_path):
    config = BertConfig.from_dict(tiny_config_dict())
    deeper = BertEncoder(config.replace(num_hidden_layers=1))
    tf.train.Checkpoint(encoder=deeper).write(str(tmp_path / "ckpt-1"))
    with pytest.raises(InputError, match=r"ckpt-1: 16 of the encoder's variables .*layer_1/"):
        load_checkpoint(BertEncoder(config), tmp_path / "ckpt-1")
