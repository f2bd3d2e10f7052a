"""A model directory's own files say what its model is: a fine-tuning output_dir is resumed,
predicted with and exported as it was trained, or not at all."""

from __future__ import annotations

import json

import pytest
import tensorflow as tf
from conftest import UNCASED_VOCAB, tiny_config_dict

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.model_io.loading import load_model_directory
from bert_tf.model_io.saving import save_model_directory
from bert_tf.model_io.source import ModelSource
from bert_tf.model_io.task_model import TASK_MODEL_FILE
from bert_tf.modeling import BertTokenClassifier, ConfigModel

CONFIG = BertConfig.from_dict(tiny_config_dict(vocab_size=30522))


def fine_tuned_output_dir(folder, model) -> str:
    """`folder` as a fine-tuning run leaves it: its files and a checkpoint."""
    folder.mkdir(exist_ok=True)
    save_model_directory(str(folder), model, str(UNCASED_VOCAB), True, task="NER", weights=False)
    tf.train.Checkpoint(model=model).write(str(folder / "ckpt-3"))
    return str(folder)


def test_settings_that_keep_the_variables_but_change_the_model_are_one_line(tmp_path):
    # Both feature-based taggers have the same variables: the checkpoint would restore into
    # the other one silently.
    trained = BertTokenClassifier(CONFIG, 5, feature_based="last_hidden", lstm_units=8)
    output_dir = fine_tuned_output_dir(tmp_path / "out", trained)
    ModelSource(output_dir).check_same_model(trained, True, str(UNCASED_VOCAB))  # the same: fine
    other = BertTokenClassifier(CONFIG, 5, feature_based="embeddings", lstm_units=8)
    with pytest.raises(InputError) as error:
        ModelSource(output_dir).check_same_model(other, True, str(UNCASED_VOCAB))
    assert str(error.value) == (
        f"--output_dir={output_dir}: its checkpoint is of feature_based='last_hidden', not "
        "'embeddings' as this run's options build (its task_model.json); rerun with the "
        "options it was trained with, or give another --output_dir"
    )


def test_a_rerun_with_another_casing_or_vocab_is_one_line(tmp_path):
    # Before, it resumed the checkpoint and wrote its task_model.json over the one that said
    # how the model had been trained.
    model = BertTokenClassifier(CONFIG, 5)
    output_dir = fine_tuned_output_dir(tmp_path / "out", model)
    with pytest.raises(InputError, match="its checkpoint is of do_lower_case=True, not False"):
        ModelSource(output_dir).check_same_model(model, False, str(UNCASED_VOCAB))
    other_vocab = tmp_path / "vocab.txt"
    other_vocab.write_text(UNCASED_VOCAB.read_text().replace("[unused0]", "domain"))
    with pytest.raises(InputError, match=f"its vocab.txt, not --vocab_file={other_vocab}"):
        ModelSource(output_dir).check_same_model(model, True, str(other_vocab))
    # The output_dir's own copy of the vocab is the same vocab.
    ModelSource(output_dir).check_same_model(model, True, str(tmp_path / "out" / "vocab.txt"))


def test_a_config_that_differs_from_the_output_dirs_is_one_line_naming_both(tmp_path):
    output_dir = fine_tuned_output_dir(tmp_path / "out", BertTokenClassifier(CONFIG, 5))
    assert ModelSource(output_dir).trained_config(CONFIG, "mine.json") == CONFIG
    with pytest.raises(InputError, match=r"--bert_config_file=mine.json: intermediate_size=64, "):
        ModelSource(output_dir).trained_config(CONFIG.replace(intermediate_size=64), "mine.json")
    # Before any checkpoint, the given config is the one to train with.
    bigger = CONFIG.replace(intermediate_size=64)
    assert ModelSource(str(tmp_path)).trained_config(bigger, "x") != CONFIG


@pytest.mark.parametrize(
    "model, message",
    [
        ({"class_name": "Sequential", "config": {}}, "'Sequential', not one of bert_tf's models"),
        ({"class_name": "BertClassifier", "config": {"num_labels": 2}}, "cannot build a BertCl"),
        ("text", "not a task model description"),
    ],
)
def test_a_task_model_file_is_checked_before_keras_builds_what_it_names(model, message, tmp_path):
    output_dir = fine_tuned_output_dir(tmp_path / "out", BertTokenClassifier(CONFIG, 5))
    (tmp_path / "out" / TASK_MODEL_FILE).write_text(
        json.dumps({"model": model, "do_lower_case": True})
    )
    with pytest.raises(InputError, match=f"{TASK_MODEL_FILE}: .*{message}"):
        load_model_directory(output_dir, ConfigModel)
