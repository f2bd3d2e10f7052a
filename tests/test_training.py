"""The training loop's checkpoints hold everything a resumed run needs."""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from test_pretraining_objectives import CONFIG, record_batch

from bert_tf.checkpoints import load_checkpoint
from bert_tf.optimization import create_optimizer
from bert_tf.pretraining.objectives import get_objective
from bert_tf.training import Trainer


def new_trainer(checkpoint_dir) -> Trainer:
    objective = get_objective("mlm_nsp")
    return Trainer(
        tf.distribute.get_strategy(),
        objective.build_model(CONFIG),
        objective,
        create_optimizer(1e-2, 10, 2),
        checkpoint_dir=str(checkpoint_dir),
    )


def test_restore_brings_back_weights_optimizer_slots_and_step(tmp_path):
    trainer = new_trainer(tmp_path)
    dataset = tf.data.Dataset.from_tensors(record_batch()).repeat()
    trainer.run_steps(trainer.distribute(dataset), 3)
    path = trainer.save()
    assert path.endswith("ckpt-3")

    resumed = new_trainer(tmp_path)
    assert resumed.restore() == path
    assert resumed.global_step == 3
    for a, b in zip(trainer.optimizer.variables, resumed.optimizer.variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for a, b in zip(trainer.model.weights, resumed.model.weights, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # Both continue identically: same schedule position, same moments.
    after = [t.run_steps(t.distribute(dataset), 1)[1] for t in (trainer, resumed)]
    assert after[0] == after[1]


def test_a_training_checkpoint_initializes_a_new_model(tmp_path):
    trainer = new_trainer(tmp_path)
    trainer.run_steps(trainer.distribute(tf.data.Dataset.from_tensors(record_batch())), 1)
    trainer.save()
    model = get_objective("mlm_nsp").build_model(CONFIG)
    load_checkpoint(model, tmp_path)  # the directory: its latest ckpt-<step>
    for a, b in zip(trainer.model.weights, model.weights, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
