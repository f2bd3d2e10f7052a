"""The encoder and pre-training heads reproduce the original implementation's numbers."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from conftest import ORACLE_FIXTURES, oracle_loss_names, tiny_config_dict

from bert_tf.config import BertConfig
from bert_tf.model_io.loading import load_checkpoint
from bert_tf.modeling.embeddings import BertEmbeddings
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import gather_indexes
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.pretraining.objectives import pretraining_loss

ENCODER_INPUTS = ("input_ids", "input_mask", "segment_ids")
# The oracle README's float32 tolerance; erf and tanh GELU differ by up to 8e-4.
ATOL = 1e-5


def run_oracle_model(hidden_act: str, oracle_inputs, oracle_checkpoint) -> dict:
    config = BertConfig.from_json_file(ORACLE_FIXTURES / "model" / "bert_config.json")
    config.hidden_act = hidden_act
    model = BertPretrainer(config)
    load_checkpoint(model, oracle_checkpoint)
    features = {k: oracle_inputs[k] for k in (*ENCODER_INPUTS, "masked_lm_positions")}
    outputs = model(features, training=False)
    losses = oracle_loss_names(pretraining_loss(outputs, oracle_inputs))
    arrays = {
        "embedding_output": outputs["embedding_output"],
        "sequence_output": outputs["sequence_output"],
        "pooled_output": outputs["pooled_output"],
        # The oracle keeps one row per masked position, batch-major: [B * P, V].
        "mlm_log_probs": np.reshape(outputs["mlm_log_probs"], (-1, config.vocab_size)),
        "nsp_log_probs": outputs["nsp_log_probs"],
        **{f"layer_{i}": out for i, out in enumerate(outputs["encoder_outputs"])},
        **losses,
    }
    return {name: np.asarray(value) for name, value in arrays.items()}


def oracle_outputs(folder: str) -> dict:
    return dict(np.load(ORACLE_FIXTURES / folder / "outputs_init.npz"))


@pytest.mark.parametrize(
    "hidden_act, folder", [("gelu", "model"), ("gelu_tanh", "model_gelu_tanh")]
)
def test_reproduces_every_original_output(hidden_act, folder, oracle_inputs, oracle_checkpoint):
    ours = run_oracle_model(hidden_act, oracle_inputs, oracle_checkpoint)
    expected = oracle_outputs(folder)
    assert set(expected) <= set(ours)
    for name, value in expected.items():
        np.testing.assert_allclose(ours[name], value, rtol=0, atol=ATOL, err_msg=name)


def test_gelu_alias_gelu_new_is_the_tanh_form(oracle_inputs, oracle_checkpoint):
    ours = run_oracle_model("gelu_new", oracle_inputs, oracle_checkpoint)
    expected = oracle_outputs("model_gelu_tanh")
    np.testing.assert_allclose(ours["sequence_output"], expected["sequence_output"], atol=ATOL)


def test_the_tolerance_tells_erf_and_tanh_gelu_apart():
    # Guards the two tests above: were the GELUs within ATOL of each other, they would prove
    # nothing about which one "gelu" means.
    erf, tanh = oracle_outputs("model"), oracle_outputs("model_gelu_tanh")
    assert np.max(np.abs(erf["sequence_output"] - tanh["sequence_output"])) > 10 * ATOL


def tiny_inputs(batch: int, seq: int, vocab: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, seq + 1, size=batch)
    mask = (np.arange(seq)[None] < lengths[:, None]).astype("int32")
    return {
        "input_ids": (rng.integers(1, vocab, size=(batch, seq)) * mask).astype("int32"),
        "input_mask": mask,
        "segment_ids": (rng.integers(0, 2, size=(batch, seq)) * mask).astype("int32"),
    }


def test_output_shapes_as_the_original_modeling_test():
    # google-research/bert modeling_test.py: batch 13, seq 7, vocab 99, hidden 32, 5 layers.
    config = BertConfig(**tiny_config_dict(num_hidden_layers=5))
    outputs = BertEncoder(config)(tiny_inputs(13, 7, 99))
    assert outputs["embedding_output"].shape == (13, 7, 32)
    assert outputs["sequence_output"].shape == (13, 7, 32)
    assert outputs["pooled_output"].shape == (13, 32)
    assert len(outputs["encoder_outputs"]) == 5
    np.testing.assert_array_equal(outputs["encoder_outputs"][-1], outputs["sequence_output"])


def test_padding_does_not_change_the_real_positions():
    encoder = BertEncoder(BertConfig(**tiny_config_dict()))
    inputs = tiny_inputs(1, 6, 99)
    inputs["input_mask"][:] = [[1, 1, 1, 1, 0, 0]]
    padded = {k: v.copy() for k, v in inputs.items()}
    padded["input_ids"][0, 4:] = [7, 8]  # other content behind the mask
    a = encoder(inputs)["sequence_output"][:, :4]
    b = encoder(padded)["sequence_output"][:, :4]
    np.testing.assert_allclose(a, b, atol=1e-6)


def outputs_before_and_after_changing_token_5(causal: bool) -> tuple[np.ndarray, np.ndarray]:
    encoder = BertEncoder(BertConfig(**tiny_config_dict(), causal_attention=causal))
    inputs = tiny_inputs(1, 8, 99)
    inputs["input_mask"][:] = 1
    changed = {k: v.copy() for k, v in inputs.items()}
    changed["input_ids"][0, 5] = (inputs["input_ids"][0, 5] % 98) + 1
    before = np.asarray(encoder(inputs)["sequence_output"])
    after = np.asarray(encoder(changed)["sequence_output"])
    return before, after


def test_causal_attention_does_not_see_later_tokens():
    before, after = outputs_before_and_after_changing_token_5(causal=True)
    np.testing.assert_allclose(before[:, :5], after[:, :5], atol=1e-6)
    assert np.max(np.abs(before[:, 5:] - after[:, 5:])) > 1e-3


def test_bidirectional_attention_sees_later_tokens():
    before, after = outputs_before_and_after_changing_token_5(causal=False)
    assert np.max(np.abs(before[:, 0] - after[:, 0])) > 1e-3


def test_dropout_acts_only_in_training():
    encoder = BertEncoder(BertConfig(**tiny_config_dict()))
    inputs = tiny_inputs(2, 8, 99)
    eval_a = encoder(inputs, training=False)["sequence_output"]
    eval_b = encoder(inputs, training=False)["sequence_output"]
    train = encoder(inputs, training=True)["sequence_output"]
    np.testing.assert_array_equal(eval_a, eval_b)
    assert np.max(np.abs(np.asarray(eval_a) - np.asarray(train))) > 1e-3


def test_masked_lm_decoder_is_the_word_embedding_table():
    config = BertConfig(**tiny_config_dict())
    model = BertPretrainer(config)
    table = model.encoder.embeddings.word_embeddings
    assert all(
        w.shape != (config.vocab_size, config.hidden_size) or w is table for w in model.weights
    )
    inputs = {**tiny_inputs(2, 8, 99), "masked_lm_positions": np.array([[1, 2], [3, 0]], "int32")}
    before = np.asarray(model(inputs)["mlm_log_probs"])
    table.assign(table.numpy() * 2.0)
    after = np.asarray(model(inputs)["mlm_log_probs"])
    assert np.max(np.abs(before - after)) > 1e-3


def pretraining_loss_of(log_probs, ids, weights, nsp_log_probs=None, labels=None) -> dict:
    outputs = {"mlm_log_probs": log_probs, "nsp_log_probs": nsp_log_probs}
    if nsp_log_probs is None:
        outputs["nsp_log_probs"] = np.log(np.full((len(log_probs), 2), 0.5, "float32"))
        labels = np.zeros((len(log_probs), 1), "int32")
    features = {"masked_lm_ids": ids, "masked_lm_weights": weights, "next_sentence_labels": labels}
    return {name: float(value) for name, value in pretraining_loss(outputs, features).items()}


def test_masked_lm_loss_is_weighted_mean_with_the_originals_epsilon():
    log_probs = np.log(np.full((1, 3, 4), 0.25, "float32"))
    log_probs[0, 0] = np.log([0.7, 0.1, 0.1, 0.1])
    ids = np.array([[0, 1, 3]])
    weights = np.array([[1.0, 1.0, 0.0]], "float32")
    loss = pretraining_loss_of(log_probs, ids, weights)["masked_lm_loss"]
    expected = (-np.log(0.7) - np.log(0.25)) / (2.0 + 1e-5)
    assert loss == pytest.approx(expected, rel=1e-6)
    # A padded slot (weight 0) does not count, whatever its id says.
    padded = pretraining_loss_of(log_probs, np.array([[0, 1, 0]]), weights)["masked_lm_loss"]
    assert padded == pytest.approx(loss)


def test_next_sentence_loss_is_the_mean_nll_and_label_1_means_random():
    nsp_log_probs = np.log(np.array([[0.9, 0.1], [0.2, 0.8]], "float32"))
    mlm_log_probs = np.log(np.full((2, 1, 4), 0.25, "float32"))
    losses = pretraining_loss_of(
        mlm_log_probs, np.zeros((2, 1)), np.ones((2, 1), "float32"), nsp_log_probs, [[0], [1]]
    )
    nsp = -(np.log(0.9) + np.log(0.8)) / 2
    assert losses["next_sentence_loss"] == pytest.approx(nsp, rel=1e-6)
    assert losses["loss"] == pytest.approx(losses["masked_lm_loss"] + nsp, rel=1e-6)


def test_mixed_precision_stays_close_to_float32(oracle_inputs, oracle_checkpoint):
    config = BertConfig.from_json_file(ORACLE_FIXTURES / "model" / "bert_config.json")
    inputs = {k: oracle_inputs[k] for k in ENCODER_INPUTS}
    reference = BertEncoder(config)
    load_checkpoint(reference, oracle_checkpoint)
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        mixed = BertEncoder(config)
        load_checkpoint(mixed, oracle_checkpoint)
        assert mixed.embeddings.word_embeddings.dtype == "float32"  # variables stay float32
        out = mixed(inputs)["sequence_output"]
    finally:
        keras.config.set_dtype_policy("float32")
    assert out.dtype == "bfloat16"
    expected = np.asarray(reference(inputs)["sequence_output"])
    np.testing.assert_allclose(np.asarray(out, "float32"), expected, atol=0.1)


def test_16_bit_lookups_by_one_hot_matmul_pick_exactly_the_rows():
    # In 16-bit compute the token types and the masked positions are one-hot matmuls (fast
    # gradients on GPUs); they must pick the very values a gather picks.
    rng = np.random.default_rng(0)
    sequence = keras.ops.cast(rng.normal(size=(2, 9, 16)), "bfloat16")  # [B, S, H]
    positions = np.array([[0, 8, 3], [5, 5, 1]], np.int32)  # [B, P]
    picked = gather_indexes(sequence, positions)
    assert picked.dtype == "bfloat16"
    expected = np.asarray(keras.ops.cast(sequence, "float32"))[np.arange(2)[:, None], positions]
    np.testing.assert_array_equal(np.asarray(keras.ops.cast(picked, "float32")), expected)

    embeddings = BertEmbeddings(99, 16, 2, 64, 0.0, 0.02, dtype="mixed_bfloat16")
    embeddings.build((2, 9))
    segment_ids = rng.integers(0, 2, (2, 9)).astype(np.int32)
    types = np.asarray(keras.ops.cast(embeddings.token_types(segment_ids), "float32"))
    table = np.asarray(keras.ops.cast(embeddings.token_type_embeddings, "bfloat16"), "float32")
    np.testing.assert_array_equal(types, table[segment_ids])


def test_encoder_rebuilds_from_its_config():
    encoder = BertEncoder(BertConfig(**tiny_config_dict(), causal_attention=True), name="bert")
    clone = BertEncoder.from_config(encoder.get_config())
    assert clone.config == encoder.config
    assert clone.config.causal_attention and clone.name == "bert"
    assert [w.shape for w in clone.weights] == [w.shape for w in encoder.weights]


def test_keras_save_and_load_keeps_the_outputs(tmp_path):
    model = BertPretrainer(BertConfig(**tiny_config_dict()))
    inputs = {**tiny_inputs(2, 8, 99), "masked_lm_positions": np.array([[1, 2], [3, 0]], "int32")}
    model.save(tmp_path / "bert.keras")
    reloaded = keras.saving.load_model(tmp_path / "bert.keras")
    assert isinstance(reloaded, BertPretrainer)
    for name in ("sequence_output", "mlm_log_probs", "nsp_log_probs"):
        np.testing.assert_array_equal(model(inputs)[name], reloaded(inputs)[name], err_msg=name)
