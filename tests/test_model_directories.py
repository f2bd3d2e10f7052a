"""Model directories have one writer and one reader: every directory this project writes (a
pre-training's output_dir and its `pretrained/` export, a fine-tuning output_dir, the
converter's two directions, scripts/make_random_bert.py) is read back by `ModelSource` as the
model, vocab, casing and labels it was written with, in the format it was written in."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, UNCASED_VOCAB, tiny_config_dict

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.model_io.convert import convert_checkpoint
from bert_tf.model_io.formats import HfFiles, OriginalFiles, TrainingFiles
from bert_tf.model_io.loading import load_model_directory
from bert_tf.model_io.saving import HF, save_model_directory
from bert_tf.model_io.source import ModelSource
from bert_tf.modeling import BertClassifier, BertPretrainer, BertTokenClassifier, ConfigModel
from bert_tf.training.checkpoints import TrainingCheckpoints

CONFIG = BertConfig.from_dict(tiny_config_dict(vocab_size=30522))
LABELS = ["contradiction", "entailment", "neutral"]


def read_back(path, written, vocab_file, do_lower_case, labels, loader: type) -> ModelSource:
    """`path` re-read: the loader of its format, and the model (class and every weight the
    format holds), vocab, casing and labels `written` was written with."""
    source = ModelSource(path)
    assert type(source) is loader
    loaded = load_model_directory(source, ConfigModel)
    assert type(loaded.model) is type(written)
    for mine, theirs in zip(loaded.model.weights, written.weights, strict=True):
        if loader is HfFiles and not type(written).hf_pooler and mine.path.startswith("pooler"):
            continue  # Hugging Face's token classifier has none
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs), err_msg=mine.path)
    with open(loaded.vocab_file, "rb") as got, open(vocab_file, "rb") as given:
        assert got.read() == given.read()
    assert source.casing_evidence()[0] is do_lower_case
    assert source.labels == labels
    return source


def fine_tuned(folder, model, vocab_file=UNCASED_VOCAB, do_lower_case=False) -> str:
    """`folder` as the fine-tuning driver leaves it: the writer's files, then the trainer's
    checkpoint of step 3."""
    save_model_directory(
        str(folder), model, str(vocab_file), do_lower_case, LABELS, "MNLI", weights=False
    )
    TrainingCheckpoints({"model": model}, str(folder)).save(3)
    return str(folder)


def test_a_fine_tuning_output_dir_reads_back_as_written(tmp_path):
    model = BertClassifier(CONFIG, 3)
    source = read_back(
        fine_tuned(tmp_path / "mnli", model), model, UNCASED_VOCAB, False, LABELS, TrainingFiles
    )
    assert source.task == "MNLI"


def test_the_converter_writes_each_way_what_reads_back_as_the_model(tmp_path):
    model = BertClassifier(CONFIG, 3)
    output_dir = fine_tuned(tmp_path / "mnli", model)
    convert_checkpoint(output_dir, str(tmp_path / "hf"), ConfigModel)  # ours -> Hugging Face's
    read_back(tmp_path / "hf", model, UNCASED_VOCAB, False, LABELS, HfFiles)
    convert_checkpoint(str(tmp_path / "hf"), str(tmp_path / "back"), ConfigModel)  # and back
    source = read_back(tmp_path / "back", model, UNCASED_VOCAB, False, LABELS, OriginalFiles)
    assert source.task == "MNLI"  # task_model.json goes along both ways


def test_a_tagger_written_in_hugging_faces_format_reads_back_with_its_labels(tmp_path):
    tagger = BertTokenClassifier(CONFIG, 5)
    labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    save_model_directory(str(tmp_path), tagger, str(UNCASED_VOCAB), True, labels, format=HF)
    read_back(tmp_path, tagger, UNCASED_VOCAB, True, labels, HfFiles)


def test_a_pre_trainings_export_and_output_dir_read_back_as_written(tmp_path):
    from bert_tf.pretraining.run import export_pretrained

    model = BertPretrainer(CONFIG)
    export_pretrained(model, str(tmp_path), str(UNCASED_VOCAB), do_lower_case=True)
    read_back(tmp_path / "pretrained", model, UNCASED_VOCAB, True, None, OriginalFiles)
    # run_pretraining.py's output_dir: the writer's files beside the trainer's checkpoints.
    save_model_directory(str(tmp_path), model, str(UNCASED_VOCAB), None, weights=False)
    TrainingCheckpoints({"model": model}, str(tmp_path)).save(5)
    read_back(tmp_path, model, UNCASED_VOCAB, None, None, TrainingFiles)


def test_make_random_bert_writes_what_reads_back_as_a_pretrainer(tmp_path):
    config = tmp_path / "bert_config.json"
    CONFIG.to_json_file(str(config))
    out = tmp_path / "random"
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_random_bert.py"),
         f"--bert_config_file={config}", f"--output_dir={out}"],
        check=True, capture_output=True,
    )  # fmt: skip
    source = ModelSource(out)
    assert type(source) is OriginalFiles
    loaded = load_model_directory(source, ConfigModel, vocab_file=str(UNCASED_VOCAB))
    assert type(loaded.model) is BertPretrainer
    assert source.casing_evidence()[0] is None  # no vocab, so no casing to record
    assert source.config == CONFIG


def test_a_folder_without_weights_is_the_originals_layout_that_says_so_when_asked(tmp_path):
    CONFIG.to_json_file(str(tmp_path / "bert_config.json"))
    source = ModelSource(tmp_path)  # a source of casing and config (BertPreprocessor's)
    assert type(source) is OriginalFiles and source.config == CONFIG
    with pytest.raises(InputError, match="no checkpoint"):
        _ = source.weights
