"""The loading rules, as a user meets them: which weights a path means, which casing a model
has, which head a model directory holds. Each case here once loaded the wrong thing without a
word (issue 47); a wrong model still runs and still prints numbers, so each must be right or
one clear line."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import UNCASED_VOCAB, tiny_config_dict

from bert_tf.checkpoints import TrainingCheckpoints, save_original_checkpoint
from bert_tf.config import BertConfig
from bert_tf.convert import convert_checkpoint
from bert_tf.errors import InputError
from bert_tf.modeling import BertClassifier, BertPretrainer, BertTokenClassifier
from bert_tf.pretrained import TASK_MODEL_FILE, load_model_directory, write_task_model_files
from bert_tf.tokenization import validate_case_matches_checkpoint

CONFIG = BertConfig.from_dict(tiny_config_dict(vocab_size=30522))


def word_embeddings(model) -> np.ndarray:
    return np.array(model.encoder.embeddings.word_embeddings.numpy())


def shifted(model, by: float) -> None:
    """Every weight of `model` moved by `by`: a later step's weights, told apart by value."""
    for variable in model.weights:
        variable.assign(variable + by)


def fine_tuned_output_dir(folder, model, task: str) -> str:
    """`folder` as a fine-tuning run leaves it: its files and a checkpoint of step 3."""
    folder.mkdir(parents=True, exist_ok=True)
    write_task_model_files(str(folder), model, str(UNCASED_VOCAB), True, task)
    TrainingCheckpoints({"model": model}, str(folder)).save(3)
    return str(folder)


def test_a_checkpoint_prefix_in_a_pretraining_output_dir_loads_that_step(tmp_path):
    out = tmp_path / "pretraining"
    model = BertPretrainer(CONFIG)
    out.mkdir()
    CONFIG.to_json_file(str(out / "bert_config.json"))
    TrainingCheckpoints({"model": model}, str(out)).save(2)
    at_step_2 = word_embeddings(model)
    shifted(model, 1.0)  # the run goes on; its end is exported to pretrained/
    save_original_checkpoint(model, str(out / "pretrained" / "bert_model.ckpt"))
    CONFIG.to_json_file(str(out / "pretrained" / "bert_config.json"))

    loaded = load_model_directory(str(out / "ckpt-2")).model
    np.testing.assert_array_equal(word_embeddings(loaded), at_step_2)


def test_a_ner_models_head_is_not_carried_into_a_sequence_classifier(tmp_path):
    ner = BertTokenClassifier(CONFIG, 5)
    ner_dir = fine_tuned_output_dir(tmp_path / "ner", ner, "NER")
    with pytest.raises(InputError) as error:
        BertClassifier.from_pretrained(ner_dir, num_labels=5)
    message = str(error.value)
    for said in (ner_dir, "BertTokenClassifier", "BertClassifier", "encoder_only=True"):
        assert said in message, said
    # Asked for, the encoder alone is legitimate: the head starts new.
    classifier = BertClassifier.from_pretrained(ner_dir, num_labels=5, encoder_only=True)
    np.testing.assert_array_equal(word_embeddings(classifier), word_embeddings(ner))
    assert not np.array_equal(classifier.head.output_weights.numpy(), ner.head.output_weights)


def released_cased_model(tmp_path) -> str:
    """A folder laid out and named as Google's released cased BERT-Base (a tiny model in it)."""
    folder = tmp_path / "cased_L-12_H-768_A-12"
    folder.mkdir()
    CONFIG.to_json_file(str(folder / "bert_config.json"))
    (folder / "vocab.txt").write_bytes(UNCASED_VOCAB.read_bytes())
    save_original_checkpoint(BertPretrainer(CONFIG), str(folder / "bert_model.ckpt"))
    return str(folder)


def test_a_released_cased_model_converts_to_hugging_face_cased(tmp_path):
    cased = released_cased_model(tmp_path)
    convert_checkpoint(cased, str(tmp_path / "hf"))  # no casing given: the model's
    tokenizer_config = json.loads((tmp_path / "hf" / "tokenizer_config.json").read_text())
    assert tokenizer_config["do_lower_case"] is False
    with pytest.raises(InputError, match=r"do_lower_case=True .*cased_L-12_H-768_A-12.* cased"):
        convert_checkpoint(cased, str(tmp_path / "hf2"), do_lower_case=True)


def test_the_casing_check_reads_the_name_of_a_model_folder_too(tmp_path):
    cased = released_cased_model(tmp_path)
    validate_case_matches_checkpoint(False, cased)
    with pytest.raises(InputError, match="cased_L-12_H-768_A-12` is a cased model"):
        validate_case_matches_checkpoint(True, cased)


def test_an_output_dir_named_with_glob_characters_is_refused_before_any_work(tmp_path):
    # TensorFlow finds a checkpoint's files by glob pattern: it saves there, but reads nothing
    # back, and a rerun would train again from step 0 over the checkpoints it cannot see.
    out = tmp_path / "mrpc[lr=2e-5]"
    with pytest.raises(InputError, match=r"mrpc\[lr=2e-5\]: TensorFlow cannot read .* \["):
        TrainingCheckpoints({"model": BertClassifier(CONFIG, 2)}, str(out))
    assert not out.exists()


def test_a_released_model_unzipped_without_a_state_file_loads(tmp_path):
    # Google's zips hold bert_config.json, vocab.txt and bert_model.ckpt.*, no `checkpoint`.
    cased = released_cased_model(tmp_path)
    (tmp_path / "cased_L-12_H-768_A-12" / "checkpoint").unlink()
    assert isinstance(load_model_directory(cased).model, BertPretrainer)
    from bert_tf.pretrained import weights_path

    assert weights_path(cased) == f"{cased}/bert_model.ckpt"


def test_fine_tuning_from_another_tasks_model_takes_its_encoder_only(tmp_path, caplog):
    from bert_tf.runtime import TrainerSettings, _initialize

    ner = BertTokenClassifier(CONFIG, 2)
    ner_dir = fine_tuned_output_dir(tmp_path / "ner", ner, "NER")
    classifier = BertClassifier(CONFIG, 2)  # as many outputs: the NER head would fit
    head = classifier.head.output_weights.numpy()
    settings = TrainerSettings(str(tmp_path / "out"), 1e-4, {}, init_checkpoint=ner_dir)
    _initialize(classifier, settings)
    np.testing.assert_array_equal(word_embeddings(classifier), word_embeddings(ner))
    np.testing.assert_array_equal(classifier.head.output_weights.numpy(), head)
    assert "holds a BertTokenClassifier" in caplog.text


@pytest.mark.parametrize("class_name", ["NoSuchModel", "Sequential", ["BertClassifier"]])
def test_a_task_model_file_naming_an_unknown_class_is_one_line(tmp_path, class_name):
    folder = tmp_path / "out"
    fine_tuned_output_dir(folder, BertClassifier(CONFIG, 2), "MRPC")
    description = json.loads((folder / TASK_MODEL_FILE).read_text())
    description["model"]["class_name"] = class_name
    (folder / TASK_MODEL_FILE).write_text(json.dumps(description))
    expected = rf"{TASK_MODEL_FILE}: .*{re.escape(repr(class_name))}"
    with pytest.raises(InputError, match=expected):
        load_model_directory(str(folder))
    with pytest.raises(InputError, match=expected):  # the class asked for, its arguments not
        BertClassifier.from_pretrained(str(folder))


# Files: kept copies, re-saves, workers, exports and shards, on a local disk as on a URL. ------


def test_a_kept_copy_cut_short_never_looks_whole(tmp_path, monkeypatch):
    from bert_tf import filesystem

    saver = TrainingCheckpoints({"model": BertClassifier(CONFIG, 2)}, str(tmp_path), 5, 2)
    real_copy = filesystem.copy

    def copy_cut_short(source: str, target: str) -> None:
        if source.endswith(".index"):  # half the index written, then the disk fills
            with open(source, "rb") as f, open(target, "wb") as out:
                out.write(f.read()[:10])
            raise OSError(28, "No space left on device")
        real_copy(source, target)

    monkeypatch.setattr(filesystem, "copy", copy_cut_short)
    with pytest.raises(InputError, match=r"kept/ckpt-2: cannot write .*ckpt-2 is saved"):
        saver.save(2)
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == []
    assert (tmp_path / "ckpt-2.index").exists()  # the checkpoint itself is saved


def test_a_step_saved_again_keeps_its_good_checkpoint(tmp_path, monkeypatch):
    saver = TrainingCheckpoints({"model": BertClassifier(CONFIG, 2)}, str(tmp_path))
    saved = saver.save(5)

    def refused(**kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(saver.manager, "save", refused)
    assert saver.save(5) == saved  # no progress since: nothing to write, nothing to lose
    assert (tmp_path / "ckpt-5.index").exists()


def test_workers_other_than_the_chief_keep_no_copies(tmp_path):
    from bert_tf.runtime import TrainerSettings, checkpoint_settings

    settings = TrainerSettings(
        output_dir=str(tmp_path / "out"), learning_rate=1e-4, batch_sizes={},
        keep_checkpoint_every_n_steps=2,
    )  # fmt: skip
    worker = checkpoint_settings(False, settings)
    assert worker.get("keep_checkpoint_every_n_steps") is None
    assert worker["max_checkpoints_to_keep"] == 1
    assert not worker["checkpoint_dir"].startswith(str(tmp_path))
    chief = checkpoint_settings(True, settings)
    assert chief["checkpoint_dir"] == str(tmp_path / "out")
    assert chief["keep_checkpoint_every_n_steps"] == 2


def test_a_failed_export_leaves_the_earlier_pretrained_model_whole(tmp_path, monkeypatch):
    from bert_tf import filesystem
    from bert_tf.pretraining.run import export_pretrained

    model = BertPretrainer(CONFIG)
    export_pretrained(model, str(tmp_path), str(UNCASED_VOCAB))
    before = {p.name: p.read_bytes() for p in (tmp_path / "pretrained").iterdir()}
    shifted(model, 1.0)

    def refused(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(filesystem, "copy", refused)  # the vocab, after the checkpoint
    with pytest.raises(OSError):
        export_pretrained(model, str(tmp_path), str(UNCASED_VOCAB))
    after = {p.name: p.read_bytes() for p in (tmp_path / "pretrained").iterdir()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pretrained"]


@pytest.mark.parametrize("loader", ["load_checkpoint", "load_model_directory"])
def test_a_hugging_face_file_at_a_url_is_downloaded_once(monkeypatch, ram_url, loader):
    # Finding the head's class and shape reads the file's header, not its weights.
    import tensorflow as tf

    from bert_tf import filesystem
    from bert_tf.convert import write_hf_directory
    from bert_tf.loading import load_checkpoint
    from bert_tf.pretrained import ModelDirectory, load_model_directory

    write_hf_directory(ModelDirectory(BertClassifier(CONFIG, 3), str(UNCASED_VOCAB), True), ram_url)
    weights = f"{ram_url}/model.safetensors"
    read = []
    real_open = filesystem.open_file

    class Counted:
        def __init__(self, f):
            self.f = f

        def read(self, *size):
            data = self.f.read(*size)
            read.append(len(data))
            return data

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    def counting_open(path, *args, **kwargs):
        f = real_open(path, *args, **kwargs)
        return Counted(f) if str(path) == weights else f

    monkeypatch.setattr(filesystem, "open_file", counting_open)
    if loader == "load_checkpoint":
        load_checkpoint(BertClassifier(CONFIG, 3), ram_url)
    else:
        assert load_model_directory(ram_url).model.num_labels == 3
    size = tf.io.gfile.stat(weights).length
    assert size <= sum(read) < 1.5 * size


@pytest.mark.parametrize("where", ["local", "url"])
def test_a_hugging_face_model_saved_in_bfloat16_loads_as_saved(tmp_path, ram_url, where):
    # save_pretrained of a model trained in bfloat16 writes BF16 tensors; transformers reads them.
    import ml_dtypes
    import safetensors.numpy
    import tensorflow as tf

    from bert_tf.convert import write_hf_directory
    from bert_tf.pretrained import ModelDirectory, load_model_directory

    folder = ram_url if where == "url" else str(tmp_path)
    model = BertClassifier(CONFIG, 3)
    write_hf_directory(ModelDirectory(model, str(UNCASED_VOCAB), True), folder)
    weights = f"{folder}/model.safetensors"
    with tf.io.gfile.GFile(weights, "rb") as f:
        tensors = safetensors.numpy.load(f.read())
    tf.io.gfile.remove(weights)  # ram:// keeps a longer file's tail on overwrite
    with tf.io.gfile.GFile(weights, "wb") as f:
        f.write(
            safetensors.numpy.save({k: v.astype(ml_dtypes.bfloat16) for k, v in tensors.items()})
        )

    loaded = load_model_directory(folder).model
    assert loaded.num_labels == 3
    for saved, read in zip(model.weights, loaded.weights, strict=True):
        rounded = np.asarray(saved).astype(ml_dtypes.bfloat16).astype(np.float32)
        np.testing.assert_array_equal(np.asarray(read), rounded, err_msg=saved.path)


def test_a_hugging_face_file_at_a_url_with_a_broken_header_is_refused_naming_it(ram_url):
    import tensorflow as tf

    from bert_tf.hf_format import HfWeights

    for data in (b"", b"\xff" * 8 + b"{}", (10).to_bytes(8, "little") + b'{"a": [1,'):
        with tf.io.gfile.GFile(f"{ram_url}/model.safetensors", "wb") as f:
            f.write(data)
        with pytest.raises(InputError, match=f"^{ram_url}/model.safetensors: not a readable"):
            HfWeights(ram_url)


def test_what_a_killed_run_left_at_a_url_is_removed_as_on_a_local_disk(tmp_path, ram_url, caplog):
    import logging
    import socket
    import subprocess
    import sys

    import tensorflow as tf

    from bert_tf import filesystem
    from bert_tf.checkpoints import write_original_checkpoint
    from bert_tf.fileio import atomic_write_text

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    host = socket.gethostname()
    for folder in (ram_url, str(tmp_path)):
        text, prefix = f"{folder}/out.txt", f"{folder}/bert_model.ckpt"
        left = [f"{text}.tmp-{host}-{dead}-k1ll3d", f"{prefix}.tmp-{host}-{dead}-k1ll3d.index"]
        elsewhere = f"{text}.tmp-another-machine-{dead}-st1ll"  # may still be at work: kept
        for path in [*left, elsewhere]:
            with tf.io.gfile.GFile(path, "w") as f:
                f.write("half")
        with caplog.at_level(logging.WARNING):
            atomic_write_text(text, "x\n")
            write_original_checkpoint({"w": np.zeros(2, np.float32)}, prefix)
        assert sorted(filesystem.glob(f"{folder}/*.tmp-*")) == [elsewhere], folder
        assert all(f"removed {path}, left by an interrupted run" in caplog.text for path in left)
