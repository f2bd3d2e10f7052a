"""The training loop's checkpoints hold everything a resumed run needs."""

from __future__ import annotations

import logging

import keras
import numpy as np
import pytest
import tensorflow as tf
from conftest import record_batch, tiny_pretraining_config

from bert_tf.errors import InputError
from bert_tf.model_io.loading import load_checkpoint
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.optimization import create_optimizer
from bert_tf.pretraining.objectives import get_objective
from bert_tf.training.loop import Trainer

CONFIG = tiny_pretraining_config()


def new_trainer(
    checkpoint_dir=None,
    dtype: str = "float32",
    optimizer: str = "adamw",
    warmup: int = 2,
    learning_rate: float = 1e-2,
    config=CONFIG,
    **options,
) -> Trainer:
    """A tiny pre-training Trainer; `dtype` is the compute policy its layers are built with."""
    objective = get_objective("mlm_nsp")
    keras.utils.set_random_seed(0)  # the same weights every run (float16 overflows depend on them)
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(dtype)
    try:
        return Trainer(
            tf.distribute.get_strategy(),
            objective.build_model(config),
            objective,
            create_optimizer(learning_rate, 10, warmup, optimizer=optimizer),
            checkpoint_dir=checkpoint_dir and str(checkpoint_dir),
            **options,
        )
    finally:
        keras.config.set_dtype_policy(previous)


def test_restore_brings_back_weights_optimizer_slots_and_step(tmp_path):
    trainer = new_trainer(tmp_path)
    dataset = tf.data.Dataset.from_tensors(record_batch()).repeat()
    trainer.run_steps(trainer.distribute(dataset), 3)
    path = trainer.checkpoints.save(trainer.global_step)
    assert path.endswith("ckpt-3")

    resumed = new_trainer(tmp_path)
    assert resumed.checkpoints.restore() == path
    assert resumed.global_step == 3
    for a, b in zip(trainer.optimizer.variables, resumed.optimizer.variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for a, b in zip(trainer.model.weights, resumed.model.weights, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # Both continue identically: same schedule position, same moments.
    after = [t.run_steps(t.distribute(dataset), 1)[1] for t in (trainer, resumed)]
    assert after[0] == after[1]


def test_a_save_the_disk_refuses_removes_its_files_and_names_the_checkpoint_kept(tmp_path):
    trainer = new_trainer(tmp_path)
    dataset = trainer.distribute(tf.data.Dataset.from_tensors(record_batch()).repeat())
    trainer.run_steps(dataset, 1)
    kept = trainer.checkpoints.save(trainer.global_step)
    trainer.run_steps(dataset, 1)
    save = trainer.checkpoints.manager.save

    def full_disk(**kwargs):  # a save that wrote part of its files, then failed
        (tmp_path / "ckpt-2_temp").mkdir()
        (tmp_path / "ckpt-2.data-00000-of-00001").write_bytes(b"half")
        raise tf.errors.ResourceExhaustedError(None, None, "ckpt-2_temp; No space left on device")

    trainer.checkpoints.manager.save = full_disk
    with pytest.raises(InputError) as error:
        trainer.checkpoints.save(trainer.global_step)
    trainer.checkpoints.manager.save = save
    assert str(error.value) == (
        f"{tmp_path}/ckpt-2: cannot save the checkpoint (ckpt-2_temp; No space left on "
        f"device); the previous one, {kept}, is kept"
    )
    assert sorted(p.name for p in tmp_path.glob("ckpt-*")) == [
        "ckpt-1.data-00000-of-00001",
        "ckpt-1.index",
    ]
    assert new_trainer(tmp_path).checkpoints.restore() == kept


def test_a_resumed_run_draws_the_dropout_masks_an_uninterrupted_one_would(tmp_path):
    # The dropout layers' seed generators are saved with the weights: before, a resumed run
    # drew its masks from the start again, and ended 0.02 away from an uninterrupted one.
    config = CONFIG.replace(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    batches = [record_batch(seed=i) for i in range(6)]

    def train(trainer, steps: range) -> None:
        for step in steps:
            dataset = tf.data.Dataset.from_tensors(batches[step])
            trainer.run_steps(trainer.distribute(dataset), 1)

    whole = new_trainer(tmp_path / "whole", config=config)
    train(whole, range(3))
    whole.checkpoints.save(3)
    train(whole, range(3, 6))
    resumed = new_trainer(tmp_path / "resumed", config=config)
    assert resumed.checkpoints.restore(str(tmp_path / "whole")).endswith("ckpt-3")
    train(resumed, range(3, 6))
    for a, b in zip(whole.model.weights, resumed.model.weights, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.path)


def test_a_checkpoint_without_the_random_state_still_resumes(tmp_path, caplog):
    # One written before the random state was saved: the weights resume, the masks start anew.
    config = CONFIG.replace(hidden_dropout_prob=0.1)
    old = new_trainer(config=config)
    old.checkpoints.state.save(str(tmp_path / "ckpt"))  # the training state alone: ckpt-1
    resumed = new_trainer(tmp_path / "new", config=config)
    with caplog.at_level(logging.INFO):
        assert resumed.checkpoints.restore(str(tmp_path)).endswith("ckpt-1")
    assert "holds no dropout random state" in caplog.text


def test_a_training_checkpoint_initializes_a_new_model(tmp_path):
    trainer = new_trainer(tmp_path)
    trainer.run_steps(trainer.distribute(tf.data.Dataset.from_tensors(record_batch())), 1)
    trainer.checkpoints.save(trainer.global_step)
    model = get_objective("mlm_nsp").build_model(CONFIG)
    load_checkpoint(model, tmp_path)  # the directory: its latest ckpt-<step>
    for a, b in zip(trainer.model.weights, model.weights, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    encoder = BertEncoder(CONFIG)
    load_checkpoint(encoder, tmp_path)
    for a, b in zip(trainer.model.encoder.weights, encoder.weights, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def train_with(dtype: str, **options) -> tuple[dict, dict]:
    """Six steps of a tiny model with `dtype` compute on one batch, again and again; returns
    the first and the last step's metrics."""
    trainer = new_trainer(dtype=dtype, warmup=0, **options)
    iterator = trainer.distribute(tf.data.Dataset.from_tensors(record_batch()).repeat())
    first = trainer.run_steps(iterator, 1)[1]
    return first, trainer.run_steps(iterator, 5)[1]


@pytest.mark.parametrize(
    "dtype, options",
    [
        # At 1e-2 the gradients grow past float16's range times 2^15 within six steps (a
        # legitimate halving of the loss scale); at 5e-3 they stay inside it.
        ("mixed_float16", {"loss_scaling": True, "learning_rate": 5e-3}),
        ("mixed_bfloat16", {}),
        ("float32", {"use_xla": True}),
        # LAMB's steps are lr * |w| per layer: a tiny model needs a larger rate to fit a batch.
        ("float32", {"optimizer": "lamb", "learning_rate": 0.3}),
    ],
)
def test_precisions_xla_and_lamb_train(dtype, options):
    first, last = train_with(dtype, **options)
    # The same batch six times: a model that learns fits it (ln(99) + ln(2) ~ 5.3 at first).
    assert first["loss"] == pytest.approx(np.log(99) + np.log(2), abs=0.5)
    assert last["loss"] < first["loss"] - 1.0
    if options.get("loss_scaling"):
        assert last["loss_scale"] == 2.0**15  # no overflow in six small steps


def test_float16_overflow_skips_the_update_and_halves_the_loss_scale():
    # A loss scale of 1e38 makes the float16 gradients overflow on the first step.
    trainer = new_trainer(dtype="mixed_float16", warmup=0, loss_scaling=True)
    trainer.loss_scale.assign(1e38)  # the scaled float16 loss overflows
    before = [w.numpy().copy() for w in trainer.model.weights]
    dataset = tf.data.Dataset.from_tensors(record_batch()).repeat()
    trainer.run_steps(trainer.distribute(dataset), 1)
    assert trainer.global_step == 0
    assert float(trainer.loss_scale.numpy()) == pytest.approx(5e37, rel=1e-6)
    for a, w in zip(before, trainer.model.weights, strict=True):
        np.testing.assert_array_equal(a, w.numpy())


@pytest.mark.parametrize("optimizer", ["adamw", "lamb"])
def test_the_fused_update_equals_the_per_variable_update(optimizer):
    # The default update (all variables in one XLA function, clip folded into a factor) and
    # the optimizer's own update_step per variable after the same clip.
    fused = new_trainer(optimizer=optimizer, warmup=0)
    assert fused.fused_update
    per_variable = new_trainer(optimizer=optimizer, warmup=0, fused_update=False)
    per_variable.model.set_weights(fused.model.get_weights())
    dataset = tf.data.Dataset.from_tensors(record_batch()).repeat()
    runs = [t.run_steps(t.distribute(dataset), 3)[1] for t in (fused, per_variable)]
    assert runs[0]["gradient_norm"] > 1.0  # the clip is in play
    for name in runs[0]:
        assert runs[0][name] == pytest.approx(runs[1][name], rel=1e-5), name
    for a, b in zip(fused.model.weights, per_variable.model.weights, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(fused.optimizer.variables, per_variable.optimizer.variables, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)


def test_xla_gives_the_steps_of_the_runtime():
    # Under one device XLA compiles the whole step (forward, backward, clip, update).
    compiled = new_trainer(warmup=0, use_xla=True)
    runtime = new_trainer(warmup=0)
    runtime.model.set_weights(compiled.model.get_weights())
    dataset = tf.data.Dataset.from_tensors(record_batch()).repeat()
    runs = [t.run_steps(t.distribute(dataset), 3)[1] for t in (compiled, runtime)]
    for name in runs[0]:
        assert runs[0][name] == pytest.approx(runs[1][name], rel=1e-4), name
    for a, b in zip(compiled.model.weights, runtime.model.weights, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


def test_a_non_finite_gradient_with_a_finite_loss_is_divergence_and_is_never_saved(tmp_path):
    from bert_tf.errors import TrainingDiverged

    trainer = new_trainer(tmp_path, warmup=0)
    objective = trainer.objective
    loss = objective.loss

    def loss_with_nan_gradient(sums, counts):
        # sqrt'(0) is infinite: the loss stays finite, its gradient is NaN.
        name = next(iter(sums))
        return loss(sums, counts) + tf.sqrt(sums[name] - sums[name])

    objective.loss = loss_with_nan_gradient
    before = [w.numpy().copy() for w in trainer.model.weights]
    dataset = tf.data.Dataset.from_tensors(record_batch()).repeat()
    with pytest.raises(TrainingDiverged, match="gradient norm is nan at step 0"):
        trainer.train(dataset, num_train_steps=3, global_batch_size=4, save_checkpoints_steps=1)
    assert not list(tmp_path.glob("ckpt-*"))
    for value, weight in zip(before, trainer.model.weights, strict=True):
        np.testing.assert_array_equal(value, weight.numpy())
