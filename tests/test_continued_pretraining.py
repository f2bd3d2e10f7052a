"""Continued pre-training (issue 49): run_pretraining.py --init_checkpoint=MODEL_DIR carries on
from a released model, with its encoder and both pre-training heads, its optimizer and step
counter new; a Hugging Face BertModel, which has no heads, trains them from new, with a word."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import tensorflow as tf
from conftest import ORACLE_FIXTURES, run_script

from bert_tf.config import BertConfig
from bert_tf.io.tfrecord import encode_example, write_records

ORACLE = ORACLE_FIXTURES / "model"


def oracle_records(path) -> None:
    """The oracle's batch (4 sequences of 16, 3 predictions each) as pre-training records."""
    batch = dict(np.load(ORACLE / "inputs.npz"))
    weights = batch.pop("masked_lm_weights")
    write_records(str(path), (
        encode_example({name: values[i] for name, values in batch.items()},
                       {"masked_lm_weights": weights[i]})
        for i in range(4)
    ))  # fmt: skip


def continue_pretraining(tmp_path, init_checkpoint, **flags) -> tuple:
    records = tmp_path / "records.tfrecord"
    oracle_records(records)
    values = {
        "input_file": records,
        "bert_config_file": ORACLE / "bert_config.json",
        "init_checkpoint": init_checkpoint,
        "output_dir": tmp_path / "out",
        "max_seq_length": 16,
        "max_predictions_per_seq": 3,
        "train_batch_size": 4,
        "eval_batch_size": 4,
        "max_eval_steps": 1,
        "do_eval": True,
        **flags,
    }
    result = run_script("run_pretraining.py", *(f"--{k}={v}" for k, v in values.items()))
    assert result.returncode == 0, result.stderr
    lines = (tmp_path / "out" / "eval_results.txt").read_text().splitlines()
    return {k: float(v) for k, v in (line.split(" = ") for line in lines)}, result.stderr


def test_from_a_released_model_directory_it_starts_at_that_models_own_loss(tmp_path):
    model_dir = tmp_path / "uncased_L-2_H-32_A-4"  # laid out as Google's released models
    shutil.copytree(ORACLE / "init", model_dir)
    shutil.copy(ORACLE / "bert_config.json", model_dir)
    # One step at the warm-up's learning rate 0: the weights it evaluates are those it loaded.
    evaluated, _ = continue_pretraining(
        tmp_path, model_dir, do_train=True, num_train_steps=1, num_warmup_steps=1,
        learning_rate=2e-5,
    )  # fmt: skip
    expected = np.load(ORACLE / "outputs_init.npz")  # the original's loss of that model
    assert evaluated["masked_lm_loss"] == pytest.approx(float(expected["mlm_loss"]), rel=1e-4)
    assert evaluated["next_sentence_loss"] == pytest.approx(float(expected["nsp_loss"]), rel=1e-4)
    assert evaluated["global_step"] == 1  # the step counter starts again
    assert (tmp_path / "out" / "ckpt-1.index").exists()


def test_from_a_hugging_face_bert_model_the_heads_train_from_new_with_a_warning(tmp_path):
    from bert_tf.model_io.loading import load_checkpoint
    from bert_tf.model_io.saving import HF, save_model_directory
    from bert_tf.modeling import BertEncoder

    encoder = BertEncoder(BertConfig.from_json_file(ORACLE / "bert_config.json"))
    load_checkpoint(encoder, ORACLE / "init" / "bert_model.ckpt")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("".join(f"t{i}\n" for i in range(512)))
    save_model_directory(str(tmp_path / "hf"), encoder, str(vocab), True, format=HF)
    evaluated, stderr = continue_pretraining(
        tmp_path,
        tmp_path / "hf",
        do_train=True,
        num_train_steps=2,
        num_warmup_steps=1,
        learning_rate=1e-3,
    )
    assert "has no cls/predictions/output_bias" in stderr
    assert "they keep their initial values" in stderr
    assert evaluated["global_step"] == 2
    # Two steps at 1e-3 move a weight by under 0.01: the encoder is the converted model's, the
    # heads new draws, not the oracle model's heads (which the Hugging Face directory lacks).
    trained = trained_weights(tmp_path / "out" / "ckpt-2")
    released = tf.train.load_checkpoint(str(ORACLE / "init" / "bert_model.ckpt"))
    moved = {name: np.abs(w - released.get_tensor(name)).max() for name, w in trained.items()}
    heads = {name for name in moved if name.startswith("cls/")}
    assert max(moved[name] for name in moved.keys() - heads) < 0.01
    assert moved["cls/predictions/transform/dense/kernel"] > 0.03
    assert moved["cls/seq_relationship/output_weights"] > 0.03


def trained_weights(checkpoint) -> dict[str, np.ndarray]:
    """A run_pretraining.py checkpoint's model weights by the original's names."""
    from bert_tf.model_io.checkpoints import variable_names
    from bert_tf.model_io.loading import load_checkpoint
    from bert_tf.modeling.pretrainer import BertPretrainer

    model = BertPretrainer(BertConfig.from_json_file(ORACLE / "bert_config.json"))
    load_checkpoint(model, checkpoint)
    return {name: np.asarray(v) for name, v in variable_names(model).items()}
