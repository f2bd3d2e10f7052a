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

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.model_io.checkpoints import (
    save_original_checkpoint,
    write_original_checkpoint,
)
from bert_tf.model_io.convert import convert_checkpoint
from bert_tf.model_io.loading import load_checkpoint, load_model_directory
from bert_tf.model_io.saving import HF, save_model_directory
from bert_tf.model_io.source import ModelSource
from bert_tf.model_io.task_model import TASK_MODEL_FILE
from bert_tf.modeling import BertClassifier, BertPretrainer, BertTokenClassifier, ConfigModel
from bert_tf.tokenization import validate_case_matches_checkpoint
from bert_tf.training.checkpoints import TrainingCheckpoints

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
    save_model_directory(str(folder), model, str(UNCASED_VOCAB), True, task=task, weights=False)
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

    loaded = load_model_directory(str(out / "ckpt-2"), ConfigModel).model
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
    convert_checkpoint(cased, str(tmp_path / "hf"), ConfigModel)  # no casing given: the model's
    tokenizer_config = json.loads((tmp_path / "hf" / "tokenizer_config.json").read_text())
    assert tokenizer_config["do_lower_case"] is False
    with pytest.raises(InputError, match=r"do_lower_case=True .*cased_L-12_H-768_A-12.* cased"):
        convert_checkpoint(cased, str(tmp_path / "hf2"), ConfigModel, do_lower_case=True)


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
    assert isinstance(load_model_directory(cased, ConfigModel).model, BertPretrainer)

    assert ModelSource(cased).weights == f"{cased}/bert_model.ckpt"


def test_fine_tuning_from_another_tasks_model_takes_its_encoder_only(tmp_path, caplog):
    from bert_tf.training.initialization import initialize
    from bert_tf.training.options import TrainerSettings

    ner = BertTokenClassifier(CONFIG, 2)
    ner_dir = fine_tuned_output_dir(tmp_path / "ner", ner, "NER")
    classifier = BertClassifier(CONFIG, 2)  # as many outputs: the NER head would fit
    head = classifier.head.output_weights.numpy()
    settings = TrainerSettings(str(tmp_path / "out"), 1e-4, {}, init_checkpoint=ner_dir)
    initialize(classifier, ModelSource(ner_dir), settings)
    np.testing.assert_array_equal(word_embeddings(classifier), word_embeddings(ner))
    np.testing.assert_array_equal(classifier.head.output_weights.numpy(), head)
    assert "holds a BertTokenClassifier" in caplog.text


def glue_output_dir(folder, task: str, labels: list[str]) -> tuple[BertClassifier, str]:
    """A classifier fine-tuned on `task` (its labels.txt too), and its output_dir."""
    model = BertClassifier(CONFIG, len(labels))
    shifted(model, 1.0)
    fine_tuned_output_dir(folder, model, task)
    (folder / "labels.txt").write_text("".join(f"{label}\n" for label in labels))
    return model, str(folder)


def initialized(model, output_dir: str, labels: list[str], tmp_path):
    from bert_tf.training.initialization import initialize
    from bert_tf.training.options import TrainerSettings

    settings = TrainerSettings(str(tmp_path / "new"), 1e-4, {}, init_checkpoint=output_dir)
    return initialize(model, ModelSource(output_dir), settings, labels)


def test_a_head_for_other_labels_is_not_carried_into_another_task(tmp_path, caplog):
    # RTE from MRPC: the same class and two outputs each, so the head fits, but MRPC's "1"
    # (paraphrase) is not RTE's "not_entailment".
    mrpc, mrpc_dir = glue_output_dir(tmp_path / "mrpc", "MRPC", ["0", "1"])
    rte = BertClassifier(CONFIG, 2)
    head = rte.head.output_weights.numpy()
    report = initialized(rte, mrpc_dir, ["entailment", "not_entailment"], tmp_path)
    assert not report.head_loaded
    np.testing.assert_array_equal(rte.head.output_weights.numpy(), head)
    np.testing.assert_array_equal(word_embeddings(rte), word_embeddings(mrpc))
    assert "fine-tuned on MRPC for the labels 0 1, not entailment not_entailment" in caplog.text


def test_a_head_for_the_same_labels_carries_over_as_ax_takes_mnlis(tmp_path):
    labels = ["contradiction", "entailment", "neutral"]
    mnli, mnli_dir = glue_output_dir(tmp_path / "mnli", "MNLI", labels)
    ax = BertClassifier(CONFIG, 3)
    assert initialized(ax, mnli_dir, labels, tmp_path).head_loaded
    np.testing.assert_array_equal(ax.head.output_weights.numpy(), mnli.head.output_weights)


def test_a_head_with_other_settings_is_not_carried_over(tmp_path, caplog):
    # A fine-tuned tagger's classifier under a feature-based one's BiLSTM: other inputs.
    fine_tuned = BertTokenClassifier(CONFIG, 5)
    ner_dir = fine_tuned_output_dir(tmp_path / "ner", fine_tuned, "NER")
    tagger = BertTokenClassifier(CONFIG, 5, **FEATURE_BASED)
    report = initialized(tagger, ner_dir, None, tmp_path)
    assert not report.head_loaded
    assert "feature_based=None, not 'weighted_sum_all_layers'" in caplog.text


@pytest.mark.parametrize("class_name", ["NoSuchModel", "Sequential", ["BertClassifier"]])
def test_a_task_model_file_naming_an_unknown_class_is_one_line(tmp_path, class_name):
    folder = tmp_path / "out"
    fine_tuned_output_dir(folder, BertClassifier(CONFIG, 2), "MRPC")
    description = json.loads((folder / TASK_MODEL_FILE).read_text())
    description["model"]["class_name"] = class_name
    (folder / TASK_MODEL_FILE).write_text(json.dumps(description))
    expected = rf"{TASK_MODEL_FILE}: .*{re.escape(repr(class_name))}"
    with pytest.raises(InputError, match=expected):
        load_model_directory(str(folder), ConfigModel)
    with pytest.raises(InputError, match=expected):  # the class asked for, its arguments not
        BertClassifier.from_pretrained(str(folder))


# Files: kept copies, re-saves, workers, exports and shards, on a local disk as on a URL. ------


def test_a_kept_copy_cut_short_never_looks_whole(tmp_path, monkeypatch):
    from bert_tf.io import filesystem

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


def test_workers_other_than_the_chief_keep_no_copies_in_a_scratch_cleaned_at_start(tmp_path):
    from bert_tf.training.options import TrainerSettings
    from bert_tf.training.setup import checkpoint_settings

    settings = TrainerSettings(
        output_dir=str(tmp_path / "out"), learning_rate=1e-4, batch_sizes={},
        keep_checkpoint_every_n_steps=2,
    )  # fmt: skip
    left = tmp_path / "out" / "workertemp_worker_1" / "ckpt-3.index"
    left.parent.mkdir(parents=True)
    left.write_text("a kill -9 left it")
    worker = checkpoint_settings(settings, "worker 1")
    assert worker.get("keep_checkpoint_every_n_steps") is None
    assert worker["max_checkpoints_to_keep"] == 1
    assert worker["checkpoint_dir"] == str(left.parent)
    assert worker["chief_checkpoint_dir"] == str(tmp_path / "out")  # what its messages name
    assert not left.parent.exists()
    chief = checkpoint_settings(settings)
    assert chief["checkpoint_dir"] == str(tmp_path / "out")
    assert chief["keep_checkpoint_every_n_steps"] == 2


def test_a_failed_export_leaves_the_earlier_pretrained_model_whole(tmp_path, monkeypatch):
    from bert_tf.io import filesystem
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

    from bert_tf.io import filesystem
    from bert_tf.model_io.loading import load_checkpoint

    save_model_directory(ram_url, BertClassifier(CONFIG, 3), str(UNCASED_VOCAB), True, format=HF)
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
        assert load_model_directory(ram_url, ConfigModel).model.num_labels == 3
    size = tf.io.gfile.stat(weights).length
    assert size <= sum(read) < 1.5 * size


@pytest.mark.parametrize("where", ["local", "url"])
def test_a_hugging_face_model_saved_in_bfloat16_loads_as_saved(tmp_path, ram_url, where):
    # save_pretrained of a model trained in bfloat16 writes BF16 tensors; transformers reads them.
    import ml_dtypes
    import safetensors.numpy
    import tensorflow as tf

    folder = ram_url if where == "url" else str(tmp_path)
    model = BertClassifier(CONFIG, 3)
    save_model_directory(folder, model, str(UNCASED_VOCAB), True, format=HF)
    weights = f"{folder}/model.safetensors"
    with tf.io.gfile.GFile(weights, "rb") as f:
        tensors = safetensors.numpy.load(f.read())
    tf.io.gfile.remove(weights)  # ram:// keeps a longer file's tail on overwrite
    with tf.io.gfile.GFile(weights, "wb") as f:
        f.write(
            safetensors.numpy.save({k: v.astype(ml_dtypes.bfloat16) for k, v in tensors.items()})
        )

    loaded = load_model_directory(folder, ConfigModel).model
    assert loaded.num_labels == 3
    for saved, read in zip(model.weights, loaded.weights, strict=True):
        rounded = np.asarray(saved).astype(ml_dtypes.bfloat16).astype(np.float32)
        np.testing.assert_array_equal(np.asarray(read), rounded, err_msg=saved.path)


def test_a_hugging_face_file_at_a_url_with_a_broken_header_is_refused_naming_it(ram_url):
    import tensorflow as tf

    from bert_tf.model_io.hf_format import HfWeights

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

    from bert_tf.io import filesystem
    from bert_tf.io.fileio import atomic_write_text
    from bert_tf.model_io.checkpoints import write_original_checkpoint

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


# Issue 58: every variable of a model is loaded or named.
FEATURE_BASED = {"feature_based": "weighted_sum_all_layers", "lstm_units": 8}


def all_weights(model) -> dict[str, np.ndarray]:
    return {variable.path: np.array(variable.numpy()) for variable in model.weights}


def assert_same_weights(loaded, model) -> None:
    expected = all_weights(model)
    got = all_weights(loaded)
    assert sorted(got) == sorted(expected)
    for path, value in expected.items():
        np.testing.assert_array_equal(got[path], value, err_msg=path)


def feature_based_tagger(seed: int = 1) -> BertTokenClassifier:
    model = BertTokenClassifier(CONFIG, 5, **FEATURE_BASED)
    rng = np.random.default_rng(seed)
    for variable in model.weights:  # every value its own: a weight left at its start shows
        variable.assign(rng.normal(size=variable.shape).astype("float32"))
    return model


def test_a_feature_based_tagger_has_variables_beyond_the_originals_names():
    model = feature_based_tagger()
    named = {id(variable) for variable in model.original_variable_names().values()}
    extra = [variable.path for variable in model.weights if id(variable) not in named]
    assert any("bilstm" in path for path in extra) and any("scalar_mix" in path for path in extra)


def test_a_feature_based_tagger_loads_back_whole_from_its_output_dir(tmp_path):
    model = feature_based_tagger()
    out = fine_tuned_output_dir(tmp_path / "ner", model, "NER")
    new = BertTokenClassifier(CONFIG, 5, **FEATURE_BASED)
    report = load_checkpoint(new, out)
    assert report.missing == []
    assert_same_weights(new, model)
    assert_same_weights(load_model_directory(out, BertTokenClassifier).model, model)
    assert_same_weights(BertTokenClassifier.from_pretrained(out), model)


def test_a_feature_based_tagger_loads_back_whole_from_the_original_format(tmp_path):
    model = feature_based_tagger()
    save_original_checkpoint(model, str(tmp_path / "bert_model.ckpt"))
    new = BertTokenClassifier(CONFIG, 5, **FEATURE_BASED)
    load_checkpoint(new, str(tmp_path / "bert_model.ckpt"))
    assert_same_weights(new, model)


def test_a_head_its_own_classes_checkpoint_has_in_part_is_one_line_naming_the_rest(tmp_path):
    # A checkpoint written with the original's names only (the BiLSTM left out), beside the
    # task_model.json of the feature-based tagger: loaded, it would tag at random.
    model = feature_based_tagger()
    folder = tmp_path / "ner"
    folder.mkdir()
    save_model_directory(str(folder), model, str(UNCASED_VOCAB), True, task="NER", weights=False)
    table = model.original_variable_names()
    write_original_checkpoint(
        {name: variable.numpy() for name, variable in table.items()},
        str(folder / "bert_model.ckpt"),
    )
    with pytest.raises(InputError, match="has some of the model's heads but not bilstm_0/"):
        BertTokenClassifier.from_pretrained(str(folder))


def test_a_head_its_own_classes_checkpoint_lacks_is_said_in_a_warning(tmp_path, caplog):
    # A Hugging Face BertForTokenClassification directory without its classifier.
    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "hf"
    folder.mkdir()
    tagger = BertTokenClassifier(CONFIG, 5)
    save_model_directory(str(folder), tagger, str(UNCASED_VOCAB), True, format=HF)
    tensors = load_file(str(folder / "model.safetensors"))
    encoder = {k: v for k, v in tensors.items() if not k.startswith("classifier")}
    save_file(encoder, str(folder / "model.safetensors"), metadata={"format": "pt"})
    report = load_checkpoint(BertTokenClassifier(CONFIG, 5), str(folder))
    assert {"output_bias", "output_weights"} <= set(report.missing)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("output_weights" in message for message in warnings), caplog.text


def test_a_pre_trained_checkpoint_gives_a_feature_based_tagger_its_encoder(tmp_path, caplog):
    pretrainer = BertPretrainer(CONFIG)
    save_original_checkpoint(pretrainer, str(tmp_path / "bert_model.ckpt"))
    tagger = BertTokenClassifier(CONFIG, 5, **FEATURE_BASED)
    report = load_checkpoint(tagger, str(tmp_path / "bert_model.ckpt"))
    np.testing.assert_array_equal(word_embeddings(tagger), word_embeddings(pretrainer))
    named = set(report.loaded) | set(report.missing)
    paths = {variable.path for variable in tagger.weights}
    table = tagger.original_variable_names()
    assert {table[name].path if name in table else name for name in named} == paths


# Issue 58, the review's cases.
def test_a_missing_index_of_the_listed_latest_checkpoint_is_said(tmp_path, caplog):
    out = tmp_path / "out"
    model = BertPretrainer(CONFIG)
    out.mkdir()
    CONFIG.to_json_file(str(out / "bert_config.json"))
    checkpoints = TrainingCheckpoints({"model": model}, str(out))
    checkpoints.save(1)
    checkpoints.save(2)
    (out / "ckpt-2.index").unlink()
    load_model_directory(str(out), BertPretrainer)
    warnings = " ".join(r.getMessage() for r in caplog.records if r.levelname == "WARNING")
    assert "ckpt-2" in warnings and "ckpt-1" in warnings, caplog.text


def test_a_hugging_face_token_classifier_without_architectures_is_a_token_classifier(tmp_path):

    folder = tmp_path / "hf"
    folder.mkdir()
    tagger = BertTokenClassifier(CONFIG, 5)
    save_model_directory(str(folder), tagger, str(UNCASED_VOCAB), True, format=HF)
    values = json.loads((folder / "config.json").read_text())
    del values["architectures"]
    (folder / "config.json").write_text(json.dumps(values))
    assert type(ConfigModel.from_pretrained(str(folder))) is BertTokenClassifier


def test_a_hugging_face_masked_lm_converts_to_the_original_format(tmp_path):
    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "hf"
    folder.mkdir()
    save_model_directory(str(folder), BertPretrainer(CONFIG), str(UNCASED_VOCAB), True, format=HF)
    tensors = load_file(str(folder / "model.safetensors"))
    masked_lm = {
        name: value for name, value in tensors.items()
        if not name.startswith(("cls.seq_relationship", "bert.pooler"))
    }  # fmt: skip
    save_file(masked_lm, str(folder / "model.safetensors"), metadata={"format": "pt"})
    values = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(
        json.dumps({**values, "architectures": ["BertForMaskedLM"]})
    )
    convert_checkpoint(str(folder), str(tmp_path / "original"), ConfigModel)
    back = BertPretrainer.from_pretrained(str(tmp_path / "original"))
    np.testing.assert_array_equal(
        word_embeddings(back), masked_lm["bert.embeddings.word_embeddings.weight"]
    )


def test_a_source_finds_its_saved_class_once_for_every_caller_of_a_load(tmp_path, monkeypatch):
    # The casing, head and load rules each ask it: one walk of the classes, one read.
    from bert_tf.model_io import source as source_module

    prefix = save_original_checkpoint(BertPretrainer(CONFIG), str(tmp_path / "bert_model.ckpt"))
    walks = []
    real = source_module.model_classes
    monkeypatch.setattr(
        source_module, "model_classes", lambda root: walks.append(root) or real(root)
    )
    source = ModelSource(prefix)
    found = source.saved_class(BertPretrainer)
    assert found[0] is BertPretrainer
    assert source.saved_class(BertClassifier) == found  # the same family
    assert load_checkpoint(BertPretrainer(CONFIG), source).head_loaded
    assert len(walks) == 1
