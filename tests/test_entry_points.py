"""The entry points a user touches first, tried as the user does: the scripts as subprocesses on
tiny inputs, the documented Python calls in a fresh interpreter that imports only their own
module. Each of these once failed while every library test passed (issue 58)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, SCRIPT_ENV, UNCASED_VOCAB, run_script, succeeded, tiny_config_dict

# Every script a user runs: the nine at the repository's root and those in scripts/.
USER_SCRIPTS = sorted(
    [path.name for path in REPO.glob("*.py")]
    + [
        f"scripts/{name}"
        for name in (
            "convert_checkpoint.py",
            "extend_vocab.py",
            "fill_mask.py",
            "local_cluster.py",
            "make_bert_config.py",
            "make_random_bert.py",
            "stdlib_corpus.py",
        )
    ]
)


def checkpoint_values(prefix: Path) -> dict[str, np.ndarray]:
    import tensorflow as tf

    reader = tf.train.load_checkpoint(str(prefix))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


@pytest.fixture(scope="module")
def random_bert(tmp_path_factory) -> Path:
    """scripts/make_random_bert.py's model directory, as a user makes one: a tiny config and
    the sample vocab."""
    root = tmp_path_factory.mktemp("random_bert")
    (root / "bert_config.json").write_text(json.dumps(tiny_config_dict(vocab_size=30522)))
    out = root / "model"
    succeeded(
        run_script(
            "scripts/make_random_bert.py",
            f"--bert_config_file={root / 'bert_config.json'}",
            f"--output_dir={out}",
            fresh=True,
        )
    )
    (out / "vocab.txt").write_bytes(UNCASED_VOCAB.read_bytes())
    return out


def test_a_random_bert_goes_to_hugging_face_and_back_with_every_weight_equal(random_bert, tmp_path):
    script = "scripts/convert_checkpoint.py"
    hf, back = tmp_path / "hf", tmp_path / "back"
    succeeded(run_script(script, f"--input={random_bert}", f"--output={hf}", fresh=True))
    assert json.loads((hf / "config.json").read_text())["architectures"] == ["BertForPreTraining"]
    succeeded(run_script(script, f"--input={hf}", f"--output={back}"))
    before = checkpoint_values(random_bert / "bert_model.ckpt")
    after = checkpoint_values(back / "bert_model.ckpt")
    assert sorted(after) == sorted(before)
    for name, value in before.items():
        np.testing.assert_array_equal(after[name], value, err_msg=name)
    assert (back / "vocab.txt").read_bytes() == UNCASED_VOCAB.read_bytes()


# Each Python call README.md, docs/features.md and docs/python_api.md show, as a fresh
# interpreter runs it with only its own imports; MODEL is a model directory.
DOCUMENTED_CALLS = {
    "load_model_directory": (
        "from bert_tf.model_io.loading import load_model_directory\n"
        "from bert_tf.modeling import ConfigModel\n"
        "print(type(load_model_directory(MODEL, ConfigModel).model).__name__)",
        "BertPretrainer",
    ),
    "ModelSource": (
        "from bert_tf.model_io.source import ModelSource\n"
        "source = ModelSource(MODEL)\n"
        "print(source.config.num_hidden_layers, source.do_lower_case(), source.vocab_file[-9:])",
        "2 True vocab.txt",
    ),
    "ConfigModel.from_pretrained": (
        "from bert_tf.modeling.config_model import ConfigModel\n"
        "print(type(ConfigModel.from_pretrained(MODEL)).__name__)",
        "BertPretrainer",
    ),
    "every model class's from_pretrained": (
        "from bert_tf.modeling import BertClassifier, BertEncoder, BertMultipleChoice, "
        "BertPretrainer, BertSpanLabeler, BertTokenClassifier\n"
        "models = [BertEncoder.from_pretrained(MODEL), BertPretrainer.from_pretrained(MODEL),\n"
        "    BertClassifier.from_pretrained(MODEL, num_labels=2),\n"
        "    BertTokenClassifier.from_pretrained(MODEL, num_labels=9),\n"
        "    BertSpanLabeler.from_pretrained(MODEL),\n"
        "    BertMultipleChoice.from_pretrained(MODEL, num_choices=4)]\n"
        "print(len(models))",
        "6",
    ),
    "load_checkpoint": (  # docs/features.md's "From Python, without absl"
        "from bert_tf.config import BertConfig\n"
        "from bert_tf.model_io.loading import load_checkpoint\n"
        "from bert_tf.modeling.encoder import BertEncoder\n"
        "encoder = BertEncoder(BertConfig.from_json_file(MODEL + '/bert_config.json'))\n"
        "print(len(load_checkpoint(encoder, MODEL + '/bert_model.ckpt').loaded))",
        "39",
    ),
    "BertPreprocessor.from_pretrained": (
        "from bert_tf.preprocessing import BertPreprocessor\n"
        "p = BertPreprocessor.from_pretrained(MODEL, max_seq_length=8)\n"
        "print(p(['hello world'])['input_ids'].numpy().tolist()[0][:4])",
        "[101, 7592, 2088, 102]",
    ),
}


@pytest.mark.parametrize("call", DOCUMENTED_CALLS)
def test_each_documented_call_works_from_its_own_import(call, random_bert):
    code, printed = DOCUMENTED_CALLS[call]
    result = subprocess.run(
        [sys.executable, "-c", f"MODEL = {str(random_bert)!r}\n{code}"],
        cwd=REPO,
        env=SCRIPT_ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    succeeded(result)
    assert result.stdout.strip().splitlines()[-1] == printed


def _default_tests_that_succeed(own_interpreter: bool = False) -> dict[str, list[str]]:
    """script -> the tests outside `slow` (and the fixtures they use) that run it and check
    that the run succeeded: a function that names the script, or calls a helper of its module
    that does (`ner_args`). With `own_interpreter`, only those that start it in an interpreter
    of its own (`run_script(..., fresh=True)`, or `subprocess` itself), not forked from one that
    has imported TensorFlow (tests/script_runner.py)."""
    found: dict[str, list[str]] = {script: [] for script in USER_SCRIPTS}
    for path in sorted((REPO / "tests").glob("test_*.py")):
        text = path.read_text()
        if re.search(r"^pytestmark = pytest\.mark\.slow", text, re.M):
            continue
        functions = [node for node in ast.parse(text).body if isinstance(node, ast.FunctionDef)]
        bodies = {node.name: ast.unparse(node) for node in functions}
        for node in functions:
            if any("slow" in ast.unparse(d) for d in node.decorator_list):
                continue
            body = bodies[node.name]
            if "succeeded(" not in body and "returncode == 0" not in body:
                continue
            helpers = [bodies[name] for name in bodies if re.search(rf"\b{name}\(", body)]
            texts = (body, *helpers)
            starts = ("fresh=True", "subprocess.run(", "subprocess.Popen(")
            if own_interpreter and not any(start in text for text in texts for start in starts):
                continue
            for script in USER_SCRIPTS:
                named = (f"'{script}'", f"'{Path(script).name}'")
                if any(name in text for text in texts for name in named):
                    found[script].append(f"{path.name}::{node.name}")
    return found


def test_every_script_a_user_runs_runs_to_success_in_the_default_suite():
    # The converter failed on every input for weeks: the one test that ran it was slow, and
    # the test command deselects slow tests.
    missing = [script for script, tests in _default_tests_that_succeed().items() if not tests]
    assert missing == []


def test_every_script_a_user_runs_starts_once_as_the_user_starts_it():
    # Most runs fork from an interpreter that has imported TensorFlow; one run of each script
    # goes through a start-up of its own (its imports, what it sets before TensorFlow loads).
    tests = _default_tests_that_succeed(own_interpreter=True)
    assert [script for script in USER_SCRIPTS if not tests[script]] == []
