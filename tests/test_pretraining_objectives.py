"""The objectives of paper Table 5 train what they say, from the same records."""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from conftest import record_batch, tiny_pretraining_config

from bert_tf.optimization import create_optimizer
from bert_tf.pretraining.objectives import get_objective, restore_original_tokens
from bert_tf.training.loop import Trainer

CONFIG = tiny_pretraining_config()


def test_restoring_puts_the_original_tokens_back_at_the_masked_positions():
    features = record_batch()
    restored = np.asarray(restore_original_tokens(features)["input_ids"])
    expected = features["input_ids"].copy()
    for b in range(4):
        for p in range(3):
            if features["masked_lm_weights"][b, p] > 0:
                expected[b, features["masked_lm_positions"][b, p]] = features["masked_lm_ids"][b, p]
    np.testing.assert_array_equal(restored, expected)
    # The padded prediction slot (position 0, weight 0) leaves [CLS]'s position alone.
    assert restored[0, 0] == features["input_ids"][0, 0]


def test_left_to_right_predicts_every_next_real_token():
    features = record_batch()
    prepared = get_objective("ltr").prepare(features)
    restored = np.asarray(restore_original_tokens(features)["input_ids"])
    np.testing.assert_array_equal(prepared["masked_lm_positions"][0], np.arange(11))
    np.testing.assert_array_equal(prepared["masked_lm_ids"], restored[:, 1:])
    np.testing.assert_array_equal(prepared["masked_lm_weights"], features["input_mask"][:, 1:])


def test_sums_and_counts_give_the_originals_losses():
    objective = get_objective("mlm_nsp")
    model = objective.build_model(CONFIG)
    features = record_batch()
    outputs = model(objective.model_inputs(features), training=False)
    sums = objective.sums(outputs, features)
    counts = objective.counts(features)
    # The original's, written out: sum(w * nll) / (sum(w) + 1e-5) + mean NSP nll.
    log_probs = np.asarray(outputs["mlm_log_probs"])  # [B, P, V]
    nll = -np.take_along_axis(log_probs, features["masked_lm_ids"][..., None], -1)[..., 0]
    weights = features["masked_lm_weights"]
    mlm = np.sum(weights * nll) / (np.sum(weights) + 1e-5)
    nsp_log_probs = np.asarray(outputs["nsp_log_probs"])
    nsp = -np.mean(
        nsp_log_probs[np.arange(len(nsp_log_probs)), features["next_sentence_labels"][:, 0]]
    )
    np.testing.assert_allclose(objective.loss(sums, counts), mlm + nsp, rtol=1e-5)


def train(objective_name: str, steps: int = 3):
    objective = get_objective(objective_name)
    model = objective.build_model(CONFIG)
    before = {v.path: v.numpy().copy() for v in model.weights}
    trainer = Trainer(
        tf.distribute.get_strategy(),
        model,
        objective,
        create_optimizer(1e-2, 10, 0),
        checkpoint_dir=None,
    )
    dataset = tf.data.Dataset.from_tensors(record_batch()).repeat()
    averages, _ = trainer.run_steps(trainer.distribute(dataset), steps)
    changed = {v.path for v in model.weights if not np.array_equal(before[v.path], v.numpy())}
    return model, averages, changed


def test_no_nsp_leaves_the_next_sentence_head_and_pooler_untouched():
    model, metrics, changed = train("mlm")
    assert set(metrics) >= {"loss", "masked_lm_loss", "masked_lm_accuracy"}
    assert not any(name.startswith("next_sentence") for name in metrics)
    untouched = {v.path for v in model.next_sentence_head.weights}
    untouched |= {v.path for v in model.encoder.pooler.weights}
    assert not untouched & changed
    assert "embeddings/word_embeddings" in changed


def test_mlm_and_nsp_trains_both_heads():
    model, metrics, changed = train("mlm_nsp")
    assert {v.path for v in model.next_sentence_head.weights} <= changed
    assert "next_sentence_accuracy" in metrics


def test_left_to_right_model_is_causal_and_reports_lm_metrics():
    model, metrics, _ = train("ltr")
    assert {"loss", "lm_loss", "lm_accuracy"} <= set(metrics)
    assert model.encoder.get_layer("attention_mask").causal
