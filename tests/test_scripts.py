"""End to end: the top-level scripts run as users run them, one subprocess per command line.

extract_features.py reads original-format checkpoints (with or without the pre-training heads) and
writes what the same encoder computes in process; bad input gets one `prog: error: ...` line on
stderr, a non-zero exit and no output file; quickstart.sh and make_random_bert.py work as
documented.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
from conftest import SAMPLE_DATA, error_line, run_script, succeeded, tiny_config_dict

from bert_tf.config import BertConfig
from bert_tf.model_io.checkpoints import save_original_checkpoint
from bert_tf.model_io.loading import load_checkpoint
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.tokenization import load_vocab

TINY = tiny_config_dict()
LAYER_NAMES = (
    "attention/self/query",
    "attention/self/key",
    "attention/self/value",
    "attention/output/dense",
    "intermediate/dense",
    "output/dense",
)


def flag_args(flags: dict[str, object]) -> list[str]:
    return [f"--{name}={value}" for name, value in flags.items()]


def original_names(num_hidden_layers: int) -> list[str]:
    """The variable names of an original BERT checkpoint (modeling.py + run_pretraining.py)."""
    names = [
        "bert/embeddings/word_embeddings",
        "bert/embeddings/token_type_embeddings",
        "bert/embeddings/position_embeddings",
        "bert/embeddings/LayerNorm/gamma",
        "bert/embeddings/LayerNorm/beta",
    ]
    for i in range(num_hidden_layers):
        for dense in LAYER_NAMES:
            names += [
                f"bert/encoder/layer_{i}/{dense}/kernel",
                f"bert/encoder/layer_{i}/{dense}/bias",
            ]
        for norm in ("attention/output/LayerNorm", "output/LayerNorm"):
            names += [f"bert/encoder/layer_{i}/{norm}/gamma", f"bert/encoder/layer_{i}/{norm}/beta"]
    return names + [
        "bert/pooler/dense/kernel",
        "bert/pooler/dense/bias",
        "cls/predictions/transform/dense/kernel",
        "cls/predictions/transform/dense/bias",
        "cls/predictions/transform/LayerNorm/gamma",
        "cls/predictions/transform/LayerNorm/beta",
        "cls/predictions/output_bias",
        "cls/seq_relationship/output_weights",
        "cls/seq_relationship/output_bias",
    ]


# --- Models written once per module ----------------------------------------------------------

# A 120-token vocabulary of our own, for the encoder-only model (vocab_size 120).
SMALL_VOCAB = (
    ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "dog", "is", "hairy", ".", "?", "no"]
    + ["it", "not", "jack", "##son", "##ville", "this", "a", "cat", "un", "##want", "##ed", ","]
    + [f"w{i:03d}" for i in range(96)]
)
# Singles, a pair, a blank line, a line longer than --max_seq_length=16, Unicode.
INPUT_LINES = [
    "The dog is hairy.",
    "Is this Jacksonville? ||| No, it is not.",
    "",
    "the dog is a cat , the cat is a dog , it is not hairy . no ? the dog is hairy .",
    "Unwanted cat ||| 力加勝北区 dog",
]


@pytest.fixture(scope="module")
def input_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("input") / "input.txt"
    path.write_text("\n".join(INPUT_LINES) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def random_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """make_random_bert.py's directory for BERT-Tiny's layout at hidden 32 (vocab 30522)."""
    root = tmp_path_factory.mktemp("random_bert")
    config = json.loads((SAMPLE_DATA / "bert_config.json").read_text())
    config.update(hidden_size=32, intermediate_size=37, num_attention_heads=4)
    (root / "config.json").write_text(json.dumps(config))
    result = run_script(
        "scripts/make_random_bert.py",
        f"--bert_config_file={root / 'config.json'}",
        f"--output_dir={root / 'model'}",
    )
    assert result.returncode == 0, result.stderr
    return root / "model"


@pytest.fixture(scope="module")
def encoder_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An encoder-only checkpoint (no cls/), its bert_config.json and a 120-token vocab.txt."""
    root = tmp_path_factory.mktemp("encoder_only")
    config = BertConfig(**dict(TINY, vocab_size=len(SMALL_VOCAB)))
    config.to_json_file(root / "bert_config.json")
    (root / "vocab.txt").write_text("".join(t + "\n" for t in SMALL_VOCAB), encoding="utf-8")
    keras.utils.set_random_seed(3)
    save_original_checkpoint(BertEncoder(config), root / "bert_model.ckpt")
    return root


def assert_features_are_the_encoders(
    output_file: Path,
    model_dir: Path,
    vocab_file: Path,
    layers: list[int],
    max_seq_length: int,
) -> list[dict]:
    """Every value written equals the encoder's `encoder_outputs` for the tokens written."""
    records = [json.loads(line) for line in output_file.read_text(encoding="utf-8").splitlines()]
    assert [record["linex_index"] for record in records] == list(range(len(INPUT_LINES)))

    config = BertConfig.from_json_file(model_dir / "bert_config.json")
    encoder = BertEncoder(config)
    load_checkpoint(encoder, model_dir / "bert_model.ckpt")
    vocab = load_vocab(vocab_file)
    ids, masks, segments = [], [], []
    for record in records:
        tokens = [feature["token"] for feature in record["features"]]
        first_sep = tokens.index("[SEP]")
        padding = [0] * (max_seq_length - len(tokens))
        ids.append([vocab[token] for token in tokens] + padding)
        masks.append([1] * len(tokens) + padding)
        segments.append([0] * (first_sep + 1) + [1] * (len(tokens) - first_sep - 1) + padding)
    outputs = encoder(
        {
            "input_ids": np.array(ids, np.int32),
            "input_mask": np.array(masks, np.int32),
            "segment_ids": np.array(segments, np.int32),
        },
        training=False,
    )["encoder_outputs"]

    for b, record in enumerate(records):
        for position, feature in enumerate(record["features"]):
            assert [layer["index"] for layer in feature["layers"]] == layers
            for layer in feature["layers"]:
                expected = np.asarray(outputs[layer["index"]])[b, position]
                np.testing.assert_allclose(layer["values"], expected, rtol=0, atol=1e-6)
    return records


# --- extract_features.py ---------------------------------------------------------------------


def test_extract_features_on_a_pretraining_checkpoint_with_the_released_vocab(
    random_bert: Path, input_file: Path, tmp_path: Path
) -> None:
    output_file = tmp_path / "features.jsonl"
    flags = {
        "input_file": input_file,
        "output_file": output_file,
        "vocab_file": SAMPLE_DATA / "vocab.txt",
        "bert_config_file": random_bert / "bert_config.json",
        "init_checkpoint": random_bert / "bert_model.ckpt",
        "layers": "-1,-2",
        "max_seq_length": 16,
        "batch_size": 2,
    }
    result = run_script("extract_features.py", *flag_args(flags), fresh=True)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr

    records = assert_features_are_the_encoders(
        output_file, random_bert, SAMPLE_DATA / "vocab.txt", [-1, -2], 16
    )
    tokens = [[feature["token"] for feature in record["features"]] for record in records]
    assert tokens[0] == ["[CLS]", "the", "dog", "is", "hairy", ".", "[SEP]"]
    assert tokens[1] == [
        "[CLS]", "is", "this", "jacksonville", "?", "[SEP]", "no", ",", "it", "is", "not", ".",
        "[SEP]",
    ]  # fmt: skip
    assert tokens[2] == ["[CLS]", "[SEP]"]
    assert len(tokens[3]) == 16 and tokens[3][-1] == "[SEP]"  # truncated to max_seq_length
    assert tokens[4] == [
        "[CLS]",
        "unwanted",
        "cat",
        "[SEP]",
        "力",
        "加",
        "勝",
        "北",
        "区",
        "dog",
        "[SEP]",
    ]
    assert len(records[0]["features"][0]["layers"][0]["values"]) == 32
    assert not [p.name for p in tmp_path.iterdir() if p.name != "features.jsonl"]


def test_extract_features_of_a_left_to_right_model_are_causal(
    random_bert: Path, tmp_path: Path
) -> None:
    # The released layout's config beside the weights says causal_attention (as
    # run_pretraining.py --objective=ltr writes it); --bert_config_file names the shape only.
    model = tmp_path / "ltr"
    model.mkdir()
    for path in random_bert.glob("bert_model.ckpt*"):
        (model / path.name).write_bytes(path.read_bytes())
    shape = json.loads((random_bert / "bert_config.json").read_text())
    (model / "bert_config.json").write_text(json.dumps({**shape, "causal_attention": True}))
    (tmp_path / "input.txt").write_text("the dog is hairy .\nthe dog is not .\n")
    output_file = tmp_path / "features.jsonl"
    flags = {
        "input_file": tmp_path / "input.txt",
        "output_file": output_file,
        "vocab_file": SAMPLE_DATA / "vocab.txt",
        "bert_config_file": random_bert / "bert_config.json",
        "init_checkpoint": model / "bert_model.ckpt",
        "layers": "-1",
        "max_seq_length": 16,
    }
    result = run_script("extract_features.py", *flag_args(flags))
    assert result.returncode == 0, result.stderr
    first, second = (json.loads(line)["features"] for line in output_file.read_text().splitlines())
    values = [[f["layers"][0]["values"] for f in features] for features in (first, second)]
    # "[CLS] the dog is" are alike in both; under causal attention they cannot see what differs.
    np.testing.assert_allclose(values[0][:4], values[1][:4], atol=1e-6)
    assert not np.allclose(values[0][4], values[1][4], atol=1e-3)


def test_extract_features_on_an_encoder_only_checkpoint_given_by_its_index_file(
    encoder_only: Path, input_file: Path, tmp_path: Path
) -> None:
    output_file = tmp_path / "features.jsonl"
    flags = {
        "input_file": input_file,
        "output_file": output_file,
        "vocab_file": encoder_only / "vocab.txt",
        "bert_config_file": encoder_only / "bert_config.json",
        "init_checkpoint": encoder_only / "bert_model.ckpt.index",
        "layers": "-1,0",
        "max_seq_length": 16,
        "batch_size": 3,
    }
    result = run_script("extract_features.py", *flag_args(flags))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr

    records = assert_features_are_the_encoders(
        output_file, encoder_only, encoder_only / "vocab.txt", [-1, 0], 16
    )
    assert [f["token"] for f in records[4]["features"]] == [
        "[CLS]", "un", "##want", "##ed", "cat", "[SEP]",
        "[UNK]", "[UNK]", "[UNK]", "[UNK]", "[UNK]", "dog", "[SEP]",
    ]  # fmt: skip


def _missing_vocab(tmp_path: Path, model: Path):
    path = tmp_path / "missing" / "vocab.txt"
    return {"vocab_file": path}, [str(path), "not found"]


def _missing_bert_config(tmp_path: Path, model: Path):
    path = tmp_path / "missing" / "bert_config.json"
    return {"bert_config_file": path}, [str(path), "no such"]


def _missing_checkpoint(tmp_path: Path, model: Path):
    path = tmp_path / "missing" / "bert_model.ckpt"
    return {"init_checkpoint": path}, [str(path), "no checkpoint found"]


def _checkpoint_of_another_shape(tmp_path: Path, model: Path):
    # The config's vocab_size (130) allows the 120-token vocab, but the checkpoint has 120 rows.
    path = tmp_path / "bert_config_130.json"
    BertConfig(**dict(TINY, vocab_size=130)).to_json_file(path)
    fragments = ["bert/embeddings/word_embeddings", "[120, 32]", "[130, 32]"]
    return {"bert_config_file": path}, fragments


def _longer_than_the_position_embeddings(tmp_path: Path, model: Path):
    return {"max_seq_length": 65}, ["--max_seq_length=65", "max_position_embeddings=64"]


def _empty_input_file(tmp_path: Path, model: Path):
    path = tmp_path / "empty.txt"
    path.write_text("")
    return {"input_file": path}, ["--input_file", str(path), "empty"]


def _vocab_larger_than_the_model(tmp_path: Path, model: Path):
    path = tmp_path / "bert_config_100.json"
    BertConfig(**dict(TINY, vocab_size=100)).to_json_file(path)
    return {"bert_config_file": path}, [str(model / "vocab.txt"), "120", "100"]


def _pairs_for_a_model_with_one_segment_type(tmp_path: Path, model: Path):
    config = tmp_path / "bert_config_one_type.json"
    BertConfig(**dict(TINY, vocab_size=120, type_vocab_size=1)).to_json_file(config)
    text = tmp_path / "pairs.txt"
    text.write_text("the cat ||| the dog\n")
    overrides = {"bert_config_file": config, "input_file": text}
    return overrides, ["--input_file", str(text), "type_vocab_size=1"]


@pytest.mark.parametrize(
    "bad_input",
    [
        _missing_vocab,
        _missing_bert_config,
        _missing_checkpoint,
        _checkpoint_of_another_shape,
        _longer_than_the_position_embeddings,
        _empty_input_file,
        _vocab_larger_than_the_model,
        _pairs_for_a_model_with_one_segment_type,
    ],
    ids=lambda case: case.__name__.lstrip("_"),
)
def test_bad_input_is_one_error_line_and_no_output_file(
    bad_input, encoder_only: Path, input_file: Path, tmp_path: Path
) -> None:
    output_dir = tmp_path / "out"
    flags = {
        "input_file": input_file,
        "output_file": output_dir / "features.jsonl",
        "vocab_file": encoder_only / "vocab.txt",
        "bert_config_file": encoder_only / "bert_config.json",
        "init_checkpoint": encoder_only / "bert_model.ckpt",
        "layers": "-1",
        "max_seq_length": 16,
    }
    overrides, fragments = bad_input(tmp_path, encoder_only)
    result = run_script("extract_features.py", *flag_args({**flags, **overrides}))

    last = error_line(result, "extract_features.py")
    for fragment in fragments:
        assert fragment in last
    assert not output_dir.exists() or not list(output_dir.iterdir())


# Runs extract_features.py with feature_json failing on the second example, after the first has
# been written: what a crash midway (a full disk, a killed job) does to the output.
_CRASH_MIDWAY = """
import os, runpy, sys
import bert_tf.extraction.features as lib
written = []
def feature_json(*args):
    if written:
        out = os.path.dirname(sys.argv[sys.argv.index("--output_file") + 1])
        print("partial:", sorted(os.listdir(out)), file=sys.stderr)
        raise RuntimeError("simulated crash")
    written.append(1)
    return real(*args)
real, lib.feature_json = lib.feature_json, feature_json
sys.argv[0] = "extract_features.py"
runpy.run_path("extract_features.py", run_name="__main__")
"""


def test_a_run_that_fails_midway_leaves_no_partial_output(
    encoder_only: Path, input_file: Path, tmp_path: Path
) -> None:
    output_file = tmp_path / "out" / "features.jsonl"
    flags = {
        "input_file": input_file,
        "vocab_file": encoder_only / "vocab.txt",
        "bert_config_file": encoder_only / "bert_config.json",
        "init_checkpoint": encoder_only / "bert_model.ckpt",
        "layers": "-1",
        "max_seq_length": 16,
        "batch_size": 1,
    }
    result = run_script("-c", _CRASH_MIDWAY, "--output_file", str(output_file), *flag_args(flags))

    assert result.returncode != 0
    assert "simulated crash" in result.stderr
    [partial] = re.findall(r"^partial: (.*)$", result.stderr, re.MULTILINE)
    assert "features.jsonl.tmp-" in partial  # the first example was being written...
    assert not output_file.exists()  # ...and nothing is left, under any name
    assert not list(output_file.parent.iterdir())


# --- scripts/quickstart.sh and scripts/make_random_bert.py -----------------------------------


@pytest.mark.slow  # about 4 minutes on 2 cores: the main job itself
def test_quickstart_pretrains_a_model_that_learned(tmp_path: Path) -> None:
    out = tmp_path / "quickstart"
    # A bound for a hang, as the README test's: about 4 minutes alone, past 15 beside the other
    # test process's README run (both train on the same 2 cores).
    succeeded(run_script("scripts/quickstart.sh", str(out), timeout=3600, program="bash"))
    pretrained = out / "pretraining" / "pretrained"
    for name in ("bert_model.ckpt.index", "bert_config.json", "vocab.txt"):
        assert (pretrained / name).exists()
    results = dict(
        line.split(" = ")
        for line in (out / "pretraining" / "eval_results.txt").read_text().splitlines()
    )
    assert float(results["masked_lm_accuracy"]) > 0.1  # ~0.0003 before training (1 / vocab)
    records = [json.loads(line) for line in (out / "features.jsonl").read_text().splitlines()]
    assert records and records[0]["features"][0]["token"] == "[CLS]"


def test_make_random_bert_writes_the_original_variable_names_and_config(
    random_bert: Path,
) -> None:
    config = json.loads((SAMPLE_DATA / "bert_config.json").read_text())
    config.update(hidden_size=32, intermediate_size=37, num_attention_heads=4)
    assert json.loads((random_bert / "bert_config.json").read_text()) == config

    prefix = str(random_bert / "bert_model.ckpt")
    shapes = dict(tf.train.list_variables(prefix))
    assert sorted(shapes) == sorted(original_names(num_hidden_layers=2))
    assert len(shapes) == 46
    assert shapes["bert/embeddings/word_embeddings"] == [30522, 32]
    assert shapes["bert/embeddings/position_embeddings"] == [512, 32]
    assert shapes["bert/encoder/layer_1/intermediate/dense/kernel"] == [32, 37]
    assert shapes["cls/predictions/output_bias"] == [30522]
    assert shapes["cls/seq_relationship/output_weights"] == [2, 32]
    assert tf.train.latest_checkpoint(str(random_bert)) == prefix

    # Initialized as the original: truncated normal(0.02) matrices, zero biases, unit LayerNorm.
    reader = tf.train.load_checkpoint(prefix)
    words = reader.get_tensor("bert/embeddings/word_embeddings")
    assert np.abs(words).max() <= 2 * 0.02
    assert 0.015 < words.std() < 0.02
    assert not reader.get_tensor("bert/encoder/layer_0/output/dense/bias").any()
    assert (reader.get_tensor("bert/embeddings/LayerNorm/gamma") == 1).all()
    assert not reader.get_tensor("cls/predictions/output_bias").any()
