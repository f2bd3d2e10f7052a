"""The optimizer, schedule and training step reproduce the original's optimization.py."""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from conftest import ORACLE_FIXTURES

from bert_tf.checkpoints import load_original_checkpoint, original_variable_names
from bert_tf.config import BertConfig
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.optimization import create_optimizer
from bert_tf.pretraining.objectives import get_objective
from bert_tf.training import Trainer

ATOL = 1e-5  # the oracle README's float32 tolerance on activations and weights


def oracle_config() -> BertConfig:
    return BertConfig.from_json_file(ORACLE_FIXTURES / "model" / "bert_config.json")


def batches(features: dict, repeat: int) -> tf.data.Dataset:
    """The same batch `repeat` times, int32 as the input pipeline gives it."""
    features = {k: v.astype(np.int32) if v.dtype == np.int64 else v for k, v in features.items()}
    return tf.data.Dataset.from_tensors(features).repeat(repeat)


def train_three_oracle_steps(oracle_inputs, oracle_checkpoint, **trainer_options):
    model = BertPretrainer(oracle_config())
    load_original_checkpoint(model, oracle_checkpoint)
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
    for name, variable in original_variable_names(model).items():
        np.testing.assert_allclose(
            variable.numpy(), reader.get_tensor(name), rtol=0, atol=ATOL, err_msg=name
        )
