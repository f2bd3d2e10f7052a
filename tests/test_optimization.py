"""The optimizer, schedule and training step reproduce the original's optimization.py."""

from __future__ import annotations

import re

import numpy as np
import pytest
import tensorflow as tf
from conftest import ORACLE_FIXTURES, oracle_loss_names, tiny_config_dict

from bert_tf.config import BertConfig
from bert_tf.model_io.loading import load_checkpoint
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.optimization import AdamWeightDecay, Lamb, WarmupLinearDecay, create_optimizer
from bert_tf.pretraining.objectives import get_objective, pretraining_loss
from bert_tf.training.loop import Trainer

ATOL = 1e-5  # the oracle README's float32 tolerance on activations and weights


def oracle_config() -> BertConfig:
    return BertConfig.from_json_file(ORACLE_FIXTURES / "model" / "bert_config.json")


def batches(features: dict, repeat: int) -> tf.data.Dataset:
    """The same batch `repeat` times, int32 as the input pipeline gives it."""
    features = {k: v.astype(np.int32) if v.dtype == np.int64 else v for k, v in features.items()}
    return tf.data.Dataset.from_tensors(features).repeat(repeat)


def train_three_oracle_steps(oracle_inputs, oracle_checkpoint, **trainer_options):
    model = BertPretrainer(oracle_config())
    load_checkpoint(model, oracle_checkpoint)
    optimizer = create_optimizer(1e-3, num_train_steps=10, num_warmup_steps=2)
    trainer = Trainer(
        tf.distribute.get_strategy(),
        model,
        get_objective("mlm_nsp"),
        optimizer,
        checkpoint_dir=None,
        **trainer_options,
    )
    iterator = trainer.distribute(batches(oracle_inputs, 3))
    steps = [trainer.run_steps(iterator, 1)[1] for _ in range(3)]
    return model, steps


def test_three_steps_reproduce_the_original_optimizer(oracle_inputs, oracle_checkpoint):
    model, steps = train_three_oracle_steps(oracle_inputs, oracle_checkpoint)
    expected = dict(np.load(ORACLE_FIXTURES / "model" / "outputs_after_3_steps.npz"))
    np.testing.assert_allclose(
        [s["loss"] for s in steps], expected["train_losses"], rtol=0, atol=ATOL
    )
    np.testing.assert_allclose(
        [s["learning_rate"] for s in steps], expected["learning_rates"], rtol=0, atol=1e-9
    )
    reader = tf.train.load_checkpoint(
        str(ORACLE_FIXTURES / "model" / "after_3_steps" / "bert_model.ckpt")
    )
    for name, variable in model.original_variable_names().items():
        np.testing.assert_allclose(
            variable.numpy(), reader.get_tensor(name), rtol=0, atol=ATOL, err_msg=name
        )
    inputs = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")
    outputs = model({k: oracle_inputs[k] for k in inputs}, training=False)
    ours = {
        "embedding_output": outputs["embedding_output"],
        "layer_0": outputs["encoder_outputs"][0],
        "layer_1": outputs["encoder_outputs"][1],
        "sequence_output": outputs["sequence_output"],
        "pooled_output": outputs["pooled_output"],
        "mlm_log_probs": np.reshape(outputs["mlm_log_probs"], (-1, model.config.vocab_size)),
        "nsp_log_probs": outputs["nsp_log_probs"],
        **oracle_loss_names(pretraining_loss(outputs, oracle_inputs)),
    }
    for name, value in ours.items():
        np.testing.assert_allclose(value, expected[name], rtol=0, atol=ATOL, err_msg=name)


def test_gradient_accumulation_gives_the_same_three_steps(oracle_inputs, oracle_checkpoint):
    # Two micro-batches of 2 per update: the loss is normalised over the whole batch of 4,
    # so the update equals the one-batch update.
    whole, whole_steps = train_three_oracle_steps(oracle_inputs, oracle_checkpoint)
    accumulated, steps = train_three_oracle_steps(
        oracle_inputs, oracle_checkpoint, gradient_accumulation_steps=2
    )
    np.testing.assert_allclose(
        [s["loss"] for s in steps], [s["loss"] for s in whole_steps], rtol=0, atol=ATOL
    )
    for a, b in zip(whole.weights, accumulated.weights, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0, atol=ATOL, err_msg=a.path)


def test_schedule_warms_up_linearly_then_decays_to_zero():
    lr = WarmupLinearDecay(1e-3, num_train_steps=10, num_warmup_steps=2)
    values = [float(lr(step)) for step in range(12)]
    # Warmup replaces the decayed value; at step 2 the decay (1 - 2/10) takes over.
    np.testing.assert_allclose(values[:4], [0.0, 5e-4, 8e-4, 7e-4], rtol=1e-6)
    np.testing.assert_allclose(values[9:], [1e-4, 0.0, 0.0], atol=1e-10)


def test_first_adam_step_has_no_bias_correction():
    # With zero moments, m = 0.1 g and v = 0.001 g^2, so the step is
    # lr * 0.1 g / (sqrt(0.001) |g| + 1e-6), about 3.16 lr; bias correction would make it lr.
    variable = tf.Variable([1.0, -2.0], name="w/kernel")
    optimizer = AdamWeightDecay(learning_rate=0.1, weight_decay_rate=0.0)
    optimizer.apply([tf.constant([0.5, -4.0])], [variable])
    g = np.array([0.5, -4.0])
    expected = np.array([1.0, -2.0]) - 0.1 * (0.1 * g) / (np.sqrt(0.001 * g * g) + 1e-6)
    np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-6)


def test_weight_decay_is_multiplied_by_the_learning_rate_and_skips_biases():
    kernel = tf.Variable([2.0], name="dense/kernel")
    bias = tf.Variable([2.0], name="dense/bias")
    optimizer = AdamWeightDecay(learning_rate=0.5, weight_decay_rate=0.1)
    optimizer.apply([tf.zeros([1]), tf.zeros([1])], [kernel, bias])
    np.testing.assert_allclose(kernel.numpy(), [2.0 - 0.5 * 0.1 * 2.0], rtol=1e-6)
    np.testing.assert_allclose(bias.numpy(), [2.0])


def test_weight_decay_skips_exactly_the_originals_layer_norm_and_bias_variables():
    model = BertPretrainer(BertConfig(**tiny_config_dict()))
    optimizer = AdamWeightDecay(learning_rate=1e-3)
    original = re.compile("LayerNorm|layer_norm|bias")
    for name, variable in model.original_variable_names().items():
        assert optimizer.decays(variable) == (not original.search(name)), name


def test_lamb_scales_each_step_by_the_trust_ratio():
    variable = tf.Variable([3.0, 4.0], name="w/kernel")  # ||w|| = 5
    optimizer = Lamb(learning_rate=0.1, weight_decay_rate=0.0)
    optimizer.apply([tf.constant([1.0, -1.0])], [variable])
    # Bias-corrected first step: u = g / (|g| + eps), ||u|| ~ sqrt(2); ratio = 5 / sqrt(2).
    u = np.array([1.0, -1.0]) / (1.0 + 1e-6)
    expected = np.array([3.0, 4.0]) - 0.1 * (5.0 / np.linalg.norm(u)) * u
    np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-5)


def test_unknown_optimizer_is_refused():
    with pytest.raises(ValueError, match="expected one of"):
        create_optimizer(1e-4, 10, 1, optimizer="sgd")
