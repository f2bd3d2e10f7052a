"""Hugging Face BERT checkpoints are read and written by one name table, bit-exactly."""

from __future__ import annotations

import importlib.util
import json
import os
import stat

import keras
import numpy as np
import pytest
from conftest import run_script, succeeded, tiny_config_dict
from safetensors.numpy import load_file, save_file

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.io.fileio import umask
from bert_tf.model_io.convert import convert_checkpoint
from bert_tf.model_io.hf_format import hf_name, hf_names, original_names
from bert_tf.model_io.loading import load_checkpoint
from bert_tf.model_io.saving import HF, save_model_directory
from bert_tf.model_io.source import ModelSource
from bert_tf.modeling import ConfigModel
from bert_tf.modeling.classifier import BertClassifier
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.multiple_choice import BertMultipleChoice
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.modeling.span_labeler import BertSpanLabeler
from bert_tf.modeling.token_classifier import BertTokenClassifier

# The tokens these tests' texts need; the models' vocab_size (tiny_config_dict's 99) covers them.
# (Not the released 30,522: a small vocabulary keeps the models and their files small.)
TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world"]
# Every head, as our class -> (constructor, whether Hugging Face's class has the pooler).
MODELS = {
    "BertModel": (BertEncoder, {}),
    "BertForPreTraining": (BertPretrainer, {}),
    "BertForSequenceClassification": (BertClassifier, {"num_labels": 3}),
    "BertForTokenClassification": (BertTokenClassifier, {"num_labels": 5}),
    "BertForQuestionAnswering": (BertSpanLabeler, {}),
    "BertForMultipleChoice": (BertMultipleChoice, {"num_choices": 4}),
}
WITHOUT_POOLER = ("BertForTokenClassification", "BertForQuestionAnswering")


def config(**overrides) -> BertConfig:
    return BertConfig(**tiny_config_dict(**overrides))


def tiny_vocab(folder) -> str:
    """`folder`/vocab.txt of `TOKENS`; its path."""
    path = folder / "vocab.txt"
    path.write_text("".join(f"{token}\n" for token in TOKENS))
    return str(path)


def random_model(arch: str, seed: int = 1):
    keras.utils.set_random_seed(seed)
    cls, kwargs = MODELS[arch]
    model = cls(config(), **kwargs)
    # Random values everywhere (biases and LayerNorms too), so a swapped name shows.
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        weight.assign(rng.normal(size=weight.shape).astype("float32"))
    return model


def values(model) -> dict[str, np.ndarray]:
    return {name: v.numpy() for name, v in model.original_variable_names().items()}


def write_hf(model, directory, labels=None) -> None:
    """`model` as a Hugging Face directory, with a vocab.txt of `TOKENS`."""
    directory.mkdir(parents=True, exist_ok=True)
    vocab = tiny_vocab(directory.parent)
    save_model_directory(str(directory), model, vocab, True, labels, format=HF)


def test_names_translate_both_ways():
    assert hf_name("bert/encoder/layer_3/attention/self/query/kernel") == (
        "encoder.layer.3.attention.self.query.weight",
        True,
    )
    assert hf_name("bert/embeddings/LayerNorm/gamma") == ("embeddings.LayerNorm.weight", False)
    # A head's names are its class's own.
    assert hf_name("cls/squad/output_weights", BertSpanLabeler.hf_names) == (
        "qa_outputs.weight",
        False,
    )
    files = [
        "bert.encoder.layer.1.output.LayerNorm.bias",
        "bert.embeddings.LayerNorm.gamma",  # older files call LayerNorm's parameters so
        "cls.predictions.transform.dense.weight",
        "cls.predictions.decoder.weight",  # tied to the embeddings
        "bert.embeddings.position_ids",  # a buffer
    ]
    assert original_names(random_model("BertForPreTraining"), files) == {
        "bert/encoder/layer_1/output/LayerNorm/beta": (files[0], False),
        "bert/embeddings/LayerNorm/gamma": (files[1], False),
        "cls/predictions/transform/dense/kernel": (files[2], True),
    }


@pytest.mark.parametrize("arch", MODELS)
def test_name_table_covers_every_weight_of_every_model_once(arch):
    model = random_model(arch)
    table, variables = hf_names(model), model.original_variable_names()
    expected = {id(w) for w in model.weights}
    if arch in WITHOUT_POOLER:  # Hugging Face builds these classes without the pooler
        expected -= {id(model.encoder.pooler.kernel), id(model.encoder.pooler.bias)}
    assert sorted(id(variables[original]) for original in table) == sorted(expected)
    prefix = "" if arch == "BertModel" else "bert."
    assert f"{prefix}embeddings.word_embeddings.weight" in {name for name, _ in table.values()}


@pytest.mark.parametrize("arch", MODELS)
def test_round_trip_through_hugging_face_files_is_bit_exact(arch, tmp_path):
    model = random_model(arch, seed=1)
    write_hf(model, tmp_path / "hf")
    assert json.loads((tmp_path / "hf" / "config.json").read_text())["architectures"] == [arch]
    back = random_model(arch, seed=2)
    load_checkpoint(back, tmp_path / "hf")
    expected, got = values(model), values(back)
    for name in expected:
        if arch in WITHOUT_POOLER and name.startswith("bert/pooler/"):
            continue
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)


def test_kernels_are_transposed_and_output_weights_are_not(tmp_path):
    model = random_model("BertForPreTraining")
    write_hf(model, tmp_path / "hf")
    tensors = load_file(tmp_path / "hf" / "model.safetensors")
    table = model.original_variable_names()
    kernel = table["bert/encoder/layer_0/intermediate/dense/kernel"].numpy()  # [H, I]
    np.testing.assert_array_equal(
        tensors["bert.encoder.layer.0.intermediate.dense.weight"], kernel.T
    )
    nsp = table["cls/seq_relationship/output_weights"].numpy()  # [2, H]
    np.testing.assert_array_equal(tensors["cls.seq_relationship.weight"], nsp)
    assert "cls.predictions.decoder.weight" not in tensors  # tied: the word embeddings


def test_hugging_face_directory_converts_to_the_original_format_and_back(tmp_path):
    model = random_model("BertForSequenceClassification")
    write_hf(model, tmp_path / "hf", labels=["contradiction", "entailment", "neutral"])
    convert_checkpoint(str(tmp_path / "hf"), str(tmp_path / "original"), ConfigModel)
    original = tmp_path / "original"
    assert sorted(p.name for p in original.iterdir()) == [
        "bert_config.json",
        "bert_model.ckpt.data-00000-of-00001",
        "bert_model.ckpt.index",
        "checkpoint",
        "labels.txt",
        "task_model.json",  # the class: the original's names do not tell
        "tokenizer_config.json",  # the casing, in every directory this project writes
        "vocab.txt",
    ]
    assert (original / "labels.txt").read_text() == "contradiction\nentailment\nneutral\n"
    assert BertConfig.from_json_file(original / "bert_config.json") == model.config
    back = random_model("BertForSequenceClassification", seed=2)
    load_checkpoint(back, original / "bert_model.ckpt")
    for name, value in values(model).items():
        np.testing.assert_array_equal(values(back)[name], value, err_msg=name)

    convert_checkpoint(str(original), str(tmp_path / "hf2"), ConfigModel)
    assert (
        load_file(tmp_path / "hf2" / "model.safetensors").keys()
        == load_file(tmp_path / "hf" / "model.safetensors").keys()
    )
    assert json.loads((tmp_path / "hf2" / "config.json").read_text())["id2label"] == {
        "0": "contradiction",
        "1": "entailment",
        "2": "neutral",
    }


@pytest.mark.parametrize("arch", MODELS)
def test_every_class_survives_a_round_trip_through_the_original_format(arch, tmp_path):
    # Before, the original format's files named no class: a token classifier came back as a
    # sequence classifier on a new pooler, a multiple-choice model as a one-output regression.
    model = random_model(arch)
    labels = [f"L{i}" for i in range(model.num_labels)] if hasattr(model, "num_labels") else None
    write_hf(model, tmp_path / "hf", labels=labels)
    convert_checkpoint(str(tmp_path / "hf"), str(tmp_path / "original"), ConfigModel)
    convert_checkpoint(str(tmp_path / "original"), str(tmp_path / "back"), ConfigModel)
    back_config = json.loads((tmp_path / "back" / "config.json").read_text())
    assert back_config["architectures"] == [arch]
    assert back_config.get("id2label") == json.loads(
        (tmp_path / "hf" / "config.json").read_text()
    ).get("id2label")
    before = load_file(tmp_path / "hf" / "model.safetensors")
    after = load_file(tmp_path / "back" / "model.safetensors")
    assert sorted(after) == sorted(before)
    for name, value in before.items():
        np.testing.assert_array_equal(after[name], value, err_msg=name)


def test_fine_tuned_output_dir_converts_with_its_head_and_labels(tmp_path):
    import tensorflow as tf

    model = random_model("BertForTokenClassification")
    output_dir = tmp_path / "ner"
    output_dir.mkdir()
    tf.train.Checkpoint(model=model, encoder=model.encoder).write(str(output_dir / "ckpt-7"))
    (output_dir / "checkpoint").write_text('model_checkpoint_path: "ckpt-7"\n')
    save_model_directory(str(output_dir), model, tiny_vocab(tmp_path), False, weights=False)
    (output_dir / "labels.txt").write_text("O\nB-PER\nI-PER\nB-LOC\nI-LOC\n")
    convert_checkpoint(str(output_dir), str(tmp_path / "hf"), ConfigModel)
    hf_config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert hf_config["architectures"] == ["BertForTokenClassification"]
    assert hf_config["id2label"]["1"] == "B-PER"
    tokenizer = json.loads((tmp_path / "hf" / "tokenizer_config.json").read_text())
    assert tokenizer["do_lower_case"] is False
    back = random_model("BertForTokenClassification", seed=2)
    load_checkpoint(back, tmp_path / "hf")
    np.testing.assert_array_equal(back.head.output_weights.numpy(), model.head.output_weights)


def test_sharded_safetensors_load(tmp_path):
    model = random_model("BertModel")
    write_hf(model, tmp_path / "hf")
    tensors = load_file(tmp_path / "hf" / "model.safetensors")
    (tmp_path / "hf" / "model.safetensors").unlink()
    names = sorted(tensors)
    shards = {
        "model-00001-of-00002.safetensors": names[:10],
        "model-00002-of-00002.safetensors": names[10:],
    }
    for file, part in shards.items():
        save_file({n: tensors[n] for n in part}, tmp_path / "hf" / file, metadata={"format": "pt"})
    index = {"weight_map": {n: file for file, part in shards.items() for n in part}}
    (tmp_path / "hf" / "model.safetensors.index.json").write_text(json.dumps(index))
    back = random_model("BertModel", seed=2)
    load_checkpoint(back, tmp_path / "hf")
    np.testing.assert_array_equal(back.pooler.kernel.numpy(), model.pooler.kernel.numpy())


def shard_elsewhere(tmp_path, name: str) -> None:
    """A Hugging Face folder hf/ whose index lists `name` for its one shard, x.safetensors in
    elsewhere/ beside it."""
    write_hf(random_model("BertModel"), tmp_path / "elsewhere")
    (tmp_path / "elsewhere" / "model.safetensors").rename(tmp_path / "elsewhere" / "x.safetensors")
    (tmp_path / "hf").mkdir()
    for file in ("config.json", "vocab.txt"):
        (tmp_path / "hf" / file).write_bytes((tmp_path / "elsewhere" / file).read_bytes())
    weight_map = {n: name for n in load_file(tmp_path / "elsewhere" / "x.safetensors")}
    (tmp_path / "hf" / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": weight_map})
    )


@pytest.mark.parametrize("escape", ["../elsewhere/x.safetensors", "/etc/x.safetensors"])
def test_an_index_naming_a_file_outside_the_folder_is_refused(escape, tmp_path):
    shard_elsewhere(tmp_path, escape)
    with pytest.raises(InputError) as error:
        load_checkpoint(BertEncoder(config()), tmp_path / "hf")
    assert str(error.value) == (
        f"{tmp_path / 'hf' / 'model.safetensors.index.json'}: lists {escape!r}, outside "
        f"{tmp_path / 'hf'}; expected the name of a file in the model's folder"
    )


def test_a_sharded_model_in_the_hugging_face_cache_loads(tmp_path):
    # The Hub's cache (snapshots/<revision>/) links every file to ../../blobs/<hash>: a link
    # leading out of the folder is the owner's own layout, not an index escaping it.
    shard_elsewhere(tmp_path, "model-00001-of-00001.safetensors")
    link = tmp_path / "hf" / "model-00001-of-00001.safetensors"
    link.symlink_to(tmp_path / "elsewhere" / "x.safetensors")
    encoder = BertEncoder(config())
    report = load_checkpoint(encoder, tmp_path / "hf")
    assert report.loaded and not report.missing


def test_pytorch_bin_is_refused_in_one_line(tmp_path):
    model = random_model("BertModel")
    write_hf(model, tmp_path / "hf")
    (tmp_path / "hf" / "model.safetensors").rename(tmp_path / "hf" / "pytorch_model.bin")
    with pytest.raises(InputError, match="only pytorch_model.bin.*safe_serialization=True") as e:
        load_checkpoint(BertEncoder(config()), tmp_path / "hf")
    assert "\n" not in str(e.value)


def test_unknown_weight_is_named(tmp_path):
    model = random_model("BertModel")
    write_hf(model, tmp_path / "hf")
    path = tmp_path / "hf" / "model.safetensors"
    tensors = load_file(path)
    tensors["encoder.layer.0.attention.self.distance_embedding.weight"] = np.zeros((3, 32), "f4")
    save_file(tensors, path, metadata={"format": "pt"})
    with pytest.raises(InputError, match=r"encoder\.layer\.0\.attention\.self\.distance_embedding"):
        load_checkpoint(BertEncoder(config()), tmp_path / "hf")


def test_missing_weight_is_named_and_nothing_is_assigned(tmp_path):
    model = random_model("BertModel")
    write_hf(model, tmp_path / "hf")
    path = tmp_path / "hf" / "model.safetensors"
    tensors = load_file(path)
    del tensors["encoder.layer.1.output.dense.weight"]
    save_file(tensors, path, metadata={"format": "pt"})
    target = random_model("BertModel", seed=2)
    before = values(target)
    with pytest.raises(InputError, match=r"encoder\.layer\.1\.output\.dense\.weight"):
        load_checkpoint(target, tmp_path / "hf")
    for name, value in values(target).items():
        np.testing.assert_array_equal(value, before[name])


def test_shape_mismatch_names_the_weight(tmp_path):
    write_hf(random_model("BertModel"), tmp_path / "hf")
    with pytest.raises(InputError, match=r"encoder\.layer\.0\.intermediate\.dense\.weight"):
        load_checkpoint(BertEncoder(config(intermediate_size=40)), tmp_path / "hf")


def test_config_maps_activations_and_causal_attention(tmp_path):
    model = BertEncoder(config(hidden_act="gelu_tanh", causal_attention=True))
    write_hf(model, tmp_path / "hf")
    values_ = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert values_["hidden_act"] == "gelu_new" and values_["is_decoder"] is True
    convert_checkpoint(str(tmp_path / "hf"), str(tmp_path / "original"), ConfigModel)
    back = BertConfig.from_json_file(tmp_path / "original" / "bert_config.json")
    assert back.hidden_act == "gelu_tanh" and back.causal_attention


def test_a_bilstm_head_has_no_hugging_face_class(tmp_path):
    model = BertClassifier(config(), num_labels=2, bilstm_units=8)
    with pytest.raises(InputError, match=r"BertClassifier has layers .*\(bilstm/"):
        write_hf(model, tmp_path / "hf")


def test_output_folder_must_be_new(tmp_path):
    write_hf(random_model("BertModel"), tmp_path / "hf")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("")
    with pytest.raises(InputError, match="exists and is not empty"):
        convert_checkpoint(str(tmp_path / "hf"), str(tmp_path / "taken"), ConfigModel)


@pytest.mark.slow  # a script run
def test_extract_features_takes_a_hugging_face_directory(tmp_path):
    model = random_model("BertModel")
    write_hf(model, tmp_path / "hf")
    (tmp_path / "input.txt").write_text("hello world\n")
    succeeded(
        run_script(
            "extract_features.py",
            f"--input_file={tmp_path / 'input.txt'}",
            f"--output_file={tmp_path / 'out.jsonl'}",
            f"--bert_config_file={tmp_path / 'hf' / 'config.json'}",
            f"--vocab_file={tmp_path / 'hf' / 'vocab.txt'}",
            f"--init_checkpoint={tmp_path / 'hf'}",
            "--layers=-1",
            "--max_seq_length=8",
        )
    )
    line = json.loads((tmp_path / "out.jsonl").read_text())
    assert [f["token"] for f in line["features"]] == ["[CLS]", "hello", "world", "[SEP]"]


def test_casing_is_checked_against_tokenizer_config(tmp_path):

    write_hf(random_model("BertModel"), tmp_path / "hf")  # do_lower_case true
    assert ModelSource(str(tmp_path / "hf")).do_lower_case(True) is True
    assert ModelSource(str(tmp_path / "hf")).do_lower_case() is True  # asked of the model
    with pytest.raises(InputError, match="tokenizer_config.json says do_lower_case=True"):
        ModelSource(str(tmp_path / "hf")).do_lower_case(False)


# With transformers and torch installed (`pip install -e .[hf]`): their classes compute what ours
# do on the converted weights. They run in a process of their own: torch and TensorFlow loaded
# in one process can crash it (conflicting native libraries). One process runs every comparison:
# starting torch and transformers is most of these tests' time.

TRANSFORMERS_SIDE = r"""
import json, sys, numpy as np, torch, transformers
spec = json.loads(sys.argv[1])
# A random BertForPreTraining, saved as transformers saves it.
torch.manual_seed(0)
config = transformers.BertConfig(**spec["make"]["config"])
made = transformers.BertForPreTraining(config)
made.save_pretrained(spec["make"]["directory"], safe_serialization=True)
# Each directory's class on its inputs.npz, into its outputs.npz.
for directory, arch in spec["run"]:
    inputs = dict(np.load(directory + "/inputs.npz"))
    model = getattr(transformers, arch).from_pretrained(directory).eval()
    with torch.no_grad():
        out = model(
            input_ids=torch.tensor(inputs["input_ids"], dtype=torch.long),
            attention_mask=torch.tensor(inputs["input_mask"], dtype=torch.long),
            token_type_ids=torch.tensor(inputs["segment_ids"], dtype=torch.long),
            output_hidden_states=True,
        )
    names = ("logits", "start_logits", "end_logits", "prediction_logits", "seq_relationship_logits")
    arrays = {n: getattr(out, n).numpy() for n in names if getattr(out, n, None) is not None}
    arrays["last_hidden"] = out.hidden_states[-1].numpy()
    np.savez(directory + "/outputs.npz", **arrays)
"""
TASK_ARCHS = [arch for arch in MODELS if arch not in ("BertModel", "BertForPreTraining")]


def random_inputs(shape) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    ids = rng.integers(0, config().vocab_size, shape).astype("int32")
    mask = np.ones_like(ids)
    mask[..., -2:] = 0
    segments = np.zeros_like(ids)
    segments[..., 5:] = 1
    return {"input_ids": ids, "input_mask": mask, "segment_ids": segments}


@pytest.fixture(scope="module")
def transformers_outputs(tmp_path_factory):
    """The folder of transformers' runs: BertForPreTraining/ (a random model of theirs, its
    inputs.npz and outputs.npz) and, for each of `TASK_ARCHS`, a random model of ours written
    as that class (its inputs.npz and their outputs.npz); and our models, by class."""
    for package in ("transformers", "torch"):  # found, not imported: see above
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} is not installed")
    root = tmp_path_factory.mktemp("transformers")
    (root / "BertForPreTraining").mkdir()
    np.savez(root / "BertForPreTraining" / "inputs.npz", **random_inputs((2, 9)))
    ours = {}
    for arch in TASK_ARCHS:
        model = random_model(arch)
        for weight in model.weights:  # BERT-sized values: random unit ones saturate everything
            weight.assign(weight.numpy() * 0.05)
        write_hf(model, root / arch)
        shape = (2, 4, 9) if arch == "BertForMultipleChoice" else (2, 9)
        np.savez(root / arch / "inputs.npz", **random_inputs(shape))
        ours[arch] = model
    spec = {
        "make": {"directory": str(root / "BertForPreTraining"), "config": tiny_config_dict()},
        "run": [[str(root / arch), arch] for arch in ["BertForPreTraining", *TASK_ARCHS]],
    }
    succeeded(run_script("-c", TRANSFORMERS_SIDE, json.dumps(spec)))
    return root, ours


def log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def test_transformers_bert_for_pretraining_converts_to_the_same_outputs(
    transformers_outputs, tmp_path
):
    hf = transformers_outputs[0] / "BertForPreTraining"
    tiny_vocab(hf)
    inputs = dict(np.load(hf / "inputs.npz"))
    theirs = dict(np.load(hf / "outputs.npz"))

    convert_checkpoint(str(hf), str(tmp_path / "original"), ConfigModel)
    ours = BertPretrainer(BertConfig.from_json_file(tmp_path / "original" / "bert_config.json"))
    load_checkpoint(ours, tmp_path / "original" / "bert_model.ckpt")
    positions = np.tile(np.arange(9, dtype="int32"), (2, 1))
    got = ours({**inputs, "masked_lm_positions": positions}, training=False)
    differences = {
        "sequence_output": got["sequence_output"] - theirs["last_hidden"],
        "mlm_log_probs": got["mlm_log_probs"] - log_softmax(theirs["prediction_logits"]),
        "nsp_log_probs": got["nsp_log_probs"] - log_softmax(theirs["seq_relationship_logits"]),
    }
    differences = {name: float(np.max(np.abs(d))) for name, d in differences.items()}
    print(differences)
    assert max(differences.values()) <= 1e-5, differences


@pytest.mark.parametrize("arch", TASK_ARCHS)
def test_our_task_models_give_transformers_the_same_logits(arch, transformers_outputs):
    root, ours = transformers_outputs
    inputs = dict(np.load(root / arch / "inputs.npz"))
    theirs = dict(np.load(root / arch / "outputs.npz"))
    got = ours[arch](inputs, training=False)
    if arch == "BertForQuestionAnswering":
        pairs = [
            (got["start_logits"], theirs["start_logits"]),
            (got["end_logits"], theirs["end_logits"]),
        ]
    else:
        pairs = [(got["logits"], theirs["logits"])]
    difference = max(float(np.max(np.abs(np.asarray(a) - b))) for a, b in pairs)
    print(arch, difference)
    assert difference <= 1e-5


def test_a_conversion_has_the_permissions_of_the_users_umask(tmp_path):
    write_hf(random_model("BertModel"), tmp_path / "hf")
    convert_checkpoint(str(tmp_path / "hf"), str(tmp_path / "original"), ConfigModel)
    convert_checkpoint(str(tmp_path / "original"), str(tmp_path / "hf2"), ConfigModel)
    mask = umask()
    for folder in ("original", "hf2"):
        assert stat.S_IMODE(os.stat(tmp_path / folder).st_mode) == 0o777 & ~mask
        for path in (tmp_path / folder).iterdir():
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~mask, path


def test_a_hub_name_for_input_says_to_download_the_folder_first(tmp_path):
    with pytest.raises(InputError) as error:
        convert_checkpoint("google-bert/bert-base-uncased", str(tmp_path / "out"), ConfigModel)
    assert str(error.value) == (
        "--input=google-bert/bert-base-uncased: no such directory; a Hugging Face Hub name? "
        "nothing is downloaded here: download the model first (huggingface-cli download "
        "google-bert/bert-base-uncased --local-dir DIR, or save_pretrained(DIR)) and give "
        "--input=DIR"
    )
    with pytest.raises(InputError, match="no such directory$"):
        convert_checkpoint(str(tmp_path / "missing"), str(tmp_path / "out"), ConfigModel)
