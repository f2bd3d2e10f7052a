"""run_classifier.py end to end on a tiny BERT: the original's outputs (eval_results.txt,
test_results.tsv), GLUE submission files, a SavedModel whose raw-text signature gives the
same probabilities in a process that imports only tensorflow and tensorflow_text, and one
clear error line for each kind of bad input."""

from __future__ import annotations

import functools
import io
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from conftest import (
    SAMPLE_DATA,
    SCRIPT_ENV,
    STS_B_HEADER,
    error_line,
    fine_tuning_args,
    run_script,
    served_json,
    sigterm_during_training,
    succeeded,
    tiny_config,
    trained_and_exported,
    write_tsv,
)

from bert_tf.config import BertConfig
from bert_tf.model_io.checkpoints import save_original_checkpoint
from bert_tf.modeling import BertClassifier
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.preprocessing import BertPreprocessor
from bert_tf.serving.cpu import bfloat16_warning, this_cpu

VOCAB = str(SAMPLE_DATA / "vocab.txt")
MRPC_HEADER = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
SENTENCES = [
    "The company said profits rose in the third quarter.",
    "Shares fell sharply after the announcement on Monday.",
    "He told reporters the deal would close next year.",
    "The court ruled against the government on Tuesday.",
    "Officials said the storm caused heavy damage.",
    "The team won its fourth straight game.",
]


def mrpc_rows(count: int, seed: int, test: bool = False) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    rows = [["index", *MRPC_HEADER[1:]] if test else MRPC_HEADER]
    for i in range(count):
        a, b = rng.choice(len(SENTENCES), 2)
        label = str(i) if test else str(int(a == b or rng.random() < 0.3))
        rows.append([label, str(i), str(i + 1), SENTENCES[a], SENTENCES[b]])
    return rows


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("glue")
    data = root / "MRPC"
    write_tsv(data / "train.tsv", mrpc_rows(20, 0))
    write_tsv(data / "dev.tsv", mrpc_rows(11, 1))
    write_tsv(data / "test.tsv", mrpc_rows(7, 2, test=True))
    config = tiny_config()
    config_file = str(root / "bert_config.json")
    config.to_json_file(config_file)
    return {"root": root, "data": str(data), "config": config_file}


def classifier_args(setup, output_dir, *extra: str) -> list[str]:
    return fine_tuning_args(
        "run_classifier.py", setup["config"], output_dir, *extra,
        task_name="MRPC", data_dir=setup["data"], max_seq_length=32,
    )  # fmt: skip


@pytest.fixture(scope="module")
def trained(setup) -> dict:
    output_dir, export_dir = setup["root"] / "out", setup["root"] / "export"
    args = functools.partial(classifier_args, setup)
    result = trained_and_exported(args, output_dir, export_dir)
    return {"output_dir": output_dir, "export_dir": export_dir, "stderr": result.stderr}


def test_writes_the_originals_outputs_and_the_glue_submission_file(trained):
    out = trained["output_dir"]
    for name in ("train.tf_record", "eval.tf_record", "predict.tf_record", "ckpt-5.index"):
        assert (out / name).is_file(), name
    results = dict(
        line.split(" = ") for line in (out / "eval_results.txt").read_text().splitlines()
    )
    assert sorted(results) == ["eval_accuracy", "eval_f1", "eval_loss", "global_step", "loss"]
    assert results["global_step"] == "5"  # int(20 / 4 * 1)
    assert 0.0 <= float(results["eval_accuracy"]) <= 1.0
    rows = [line.split("\t") for line in (out / "test_results.tsv").read_text().splitlines()]
    assert len(rows) == 7 and all(len(row) == 2 for row in rows)
    assert all(abs(sum(map(float, row)) - 1.0) < 1e-6 for row in rows)
    submission = (out / "MRPC.tsv").read_text().splitlines()
    assert submission[0] == "index\tprediction"
    assert [line.split("\t")[0] for line in submission[1:]] == [str(i) for i in range(7)]
    assert {line.split("\t")[1] for line in submission[1:]} <= {"0", "1"}
    assert "steps_per_second=" in trained["stderr"]


def test_evaluation_says_what_it_does_and_how_far_it_is(trained):
    stderr = trained["stderr"]
    assert "dev: 11 examples, 11 records: the model of step 5 predicts them" in stderr
    assert re.search(r"\] dev: [\d,]+(/[\d,]+)? batches \(", stderr), stderr[-2000:]
    assert re.search(r"\] test: [\d,]+(/[\d,]+)? batches \(", stderr), stderr[-2000:]


def test_the_output_dir_is_a_model_directory_that_predicts_as_the_run(trained):
    # bert_config.json beside the checkpoints: from_pretrained takes the fine-tuned classifier.
    model = BertClassifier.from_pretrained(trained["output_dir"], num_labels=2)
    preprocessor = BertPreprocessor(VOCAB, max_seq_length=32)
    test_rows = mrpc_rows(7, 2, test=True)[1:]
    inputs = preprocessor(([row[3] for row in test_rows], [row[4] for row in test_rows]))
    probabilities = tf.nn.softmax(model(inputs, training=False)["logits"]).numpy()
    results = (trained["output_dir"] / "test_results.tsv").read_text().splitlines()
    expected = [[float(p) for p in line.split("\t")] for line in results]
    np.testing.assert_allclose(probabilities, expected, atol=1e-5)


def test_a_rerun_with_another_casing_is_one_line_and_leaves_the_model_as_it_was(
    trained, setup, tmp_path
):
    copy = tmp_path / "copy"
    shutil.copytree(trained["output_dir"], copy)
    described = (copy / "task_model.json").read_text()
    result = run_script(*classifier_args(setup, copy, "--do_train", "--do_lower_case=false"))
    line = error_line(result, "run_classifier.py")
    assert "its checkpoint is of do_lower_case=True, not False" in line, line
    assert (copy / "task_model.json").read_text() == described


LOAD_AND_SERVE = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the tokenizer uses)
model = tf.saved_model.load(sys.argv[1])
text_a, text_b = json.loads(sys.argv[2])
text = model.signatures["serving_default"](text_a=tf.constant(text_a), text_b=tf.constant(text_b))
ids = model.signatures["serve"](
    input_ids=tf.constant([[2, 7592, 3]]), input_mask=tf.constant([[1, 1, 1]]),
    segment_ids=tf.constant([[0, 0, 0]]),
)
imported = sorted(m.split(".")[0] for m in sys.modules if m.split(".")[0] in ("bert_tf", "keras"))
print(json.dumps({
    "probabilities": text["probabilities"].numpy().tolist(),
    "label": [x.decode() for x in text["label"].numpy()],
    "ids_probabilities": ids["probabilities"].numpy().tolist(),
    "imported": sorted(set(imported)),
}))
"""


def serve_test_texts(export_dir, setup) -> dict:
    """The SavedModel's outputs for the MRPC test pairs, in a process without bert_tf."""
    test_rows = mrpc_rows(7, 2, test=True)[1:]
    texts = [[row[3] for row in test_rows], [row[4] for row in test_rows]]
    return served_json(LOAD_AND_SERVE, str(export_dir), json.dumps(texts), cwd=setup["root"])


def test_the_saved_model_serves_raw_text_as_the_in_process_model(trained, setup):
    served = serve_test_texts(trained["export_dir"], setup)
    assert served["imported"] == [] or served["imported"] == ["keras"]  # never bert_tf
    in_process = np.loadtxt(trained["output_dir"] / "test_results.tsv", ndmin=2)
    np.testing.assert_allclose(served["probabilities"], in_process, atol=1e-5)
    submitted = [line.split("\t")[1] for line in
                 (trained["output_dir"] / "MRPC.tsv").read_text().splitlines()[1:]]  # fmt: skip
    assert served["label"] == submitted
    assert np.asarray(served["ids_probabilities"]).shape == (1, 2)
    meta = json.loads((trained["export_dir"] / "assets.extra" / "bert_tf.json").read_text())
    assert meta == {
        "do_lower_case": True,
        "max_seq_length": 32,
        "labels": ["0", "1"],
        "text_pairs": True,
        "dtype": "float32",
    }  # noqa: E501
    assert (trained["export_dir"] / "assets" / "vocab.txt").is_file()


def test_saved_model_cli_lists_both_signatures(trained):
    cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
    result = subprocess.run(
        [cli, "show", "--dir", str(trained["export_dir"]), "--all"],
        env=SCRIPT_ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "signature_def['serving_default']" in result.stdout
    assert "signature_def['serve']" in result.stdout
    assert "inputs['text_a']" in result.stdout and "inputs['input_ids']" in result.stdout


@pytest.mark.slow  # CI time: among the longest end-to-end runs
def test_export_alone_exports_the_fine_tuned_output_dir(trained, setup):
    export_dir = setup["root"] / "export_again"
    result = run_script(
        *classifier_args(setup, trained["output_dir"], f"--export_dir={export_dir}"), timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # The fine-tuned model (not a fresh one): it serves what the trained run predicted.
    served = serve_test_texts(export_dir, setup)
    in_process = np.loadtxt(trained["output_dir"] / "test_results.tsv", ndmin=2)
    np.testing.assert_allclose(served["probabilities"], in_process, atol=1e-5)


@pytest.mark.slow  # CI time: among the longest end-to-end runs
def test_a_bfloat16_export_serves_the_fine_tuned_model_in_bfloat16(trained, setup):
    export_dir = setup["root"] / "export_bfloat16"
    args = classifier_args(setup, trained["output_dir"], f"--export_dir={export_dir}")
    result = run_script(*args, "--export_dtype=bfloat16", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    meta = json.loads((export_dir / "assets.extra" / "bert_tf.json").read_text())
    assert meta["dtype"] == "bfloat16"
    # Made as asked on any CPU; one line where this one would serve it slower than float32.
    warning = bfloat16_warning(this_cpu())
    assert (warning in result.stderr) if warning else ("neither AVX512_BF16" not in result.stderr)
    served = serve_test_texts(export_dir, setup)
    in_process = np.loadtxt(trained["output_dir"] / "test_results.tsv", ndmin=2)
    # bfloat16 keeps 8 bits of mantissa: close to float32's probabilities, not equal.
    np.testing.assert_allclose(served["probabilities"], in_process, atol=0.02)
    assert not np.allclose(served["probabilities"], in_process, atol=1e-6)


def test_sigterm_stops_fine_tuning_with_a_checkpoint_of_the_step_reached(setup, tmp_path):
    output_dir = tmp_path / "out"
    never = 100_000  # epochs, steps per loop and per checkpoint: only the signal ends it
    args = classifier_args(
        setup, output_dir, "--do_train", "--do_eval", f"--num_train_epochs={never}",
        f"--iterations_per_loop={never}", f"--save_checkpoints_steps={never}",
        f"--log_steps={never}",
    )  # fmt: skip
    returncode, stderr = sigterm_during_training(args, "training MRPC:")
    assert returncode == 143, stderr[-2000:]
    (index,) = output_dir.glob("ckpt-*.index")
    stopped_at = int(index.name[len("ckpt-") : -len(".index")])
    assert 1 <= stopped_at < never
    assert stderr.splitlines()[-1].startswith(
        f"run_classifier.py: stopped by SIGTERM at step {stopped_at}; saved"
    )
    assert not (output_dir / "eval_results.txt").exists()  # no evaluation of a stopped run


def test_an_export_beside_other_files_leaves_them_as_they_were(trained, setup):
    # The export went into a new folder of a folder that holds the data, config and run.
    assert sorted(p.name for p in setup["root"].iterdir()) == [
        "MRPC", "bert_config.json", "export", "out",
    ]  # fmt: skip
    assert (setup["root"] / "MRPC" / "train.tsv").read_text().startswith("Quality\t")


@pytest.mark.parametrize("target", ["output_dir", "user_folder"])
def test_an_export_dir_over_files_it_did_not_write_is_refused_before_any_work(
    target, trained, setup, tmp_path
):
    output_dir = tmp_path / "out"
    shutil.copytree(trained["output_dir"], output_dir)
    user_folder = tmp_path / "mine"
    user_folder.mkdir()
    (user_folder / "thesis.tex").write_text("years of work")
    export_dir = output_dir if target == "output_dir" else user_folder
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    result = run_script(
        *classifier_args(setup, output_dir, "--do_train", f"--export_dir={export_dir}")
    )
    line = error_line(result, "run_classifier.py")
    assert line.startswith(f"run_classifier.py: error: --export_dir={export_dir}: holds ")
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_an_output_dir_of_another_task_or_model_is_one_line_naming_both(trained, setup, tmp_path):
    output_dir = tmp_path / "out"
    shutil.copytree(trained["output_dir"], output_dir)  # an MRPC run's
    before = {p: p.read_bytes() for p in output_dir.rglob("*") if p.is_file()}
    rte = tmp_path / "RTE"
    rows = [[str(i), "A cat.", "An animal.", "entailment"] for i in range(8)]
    write_tsv(rte / "train.tsv", [["index", "sentence1", "sentence2", "label"], *rows])
    args = classifier_args(setup, output_dir, "--do_train")
    args = [a for a in args if not a.startswith(("--task_name=", "--data_dir="))]
    line = error_line(
        run_script(*args, "--task_name=RTE", f"--data_dir={rte}"), "run_classifier.py"
    )
    assert line == (
        f"run_classifier.py: error: --output_dir={output_dir}: holds a BertClassifier "
        "fine-tuned on MRPC, not on RTE; give each task an --output_dir of its own"
    )
    wider = tiny_config().replace(hidden_size=64, intermediate_size=128)
    args = classifier_args(setup, output_dir, "--do_eval")
    line = rerun_with_config(setup, args, wider, tmp_path / "wider.json")
    assert line == config_mismatch(tmp_path / "wider.json", output_dir, "hidden_size", 64, 32)
    assert {p: p.read_bytes() for p in output_dir.rglob("*") if p.is_file()} == before


def test_sts_b_is_regression_with_pearson_and_spearman(setup, tmp_path):
    header = STS_B_HEADER
    rng = np.random.default_rng(3)
    rows = [header] + [
        [
            str(i),
            "g",
            "f",
            "y",
            "o",
            "s",
            "s",
            SENTENCES[i % 6],
            SENTENCES[(i * 5) % 6],
            f"{rng.uniform(0, 5):.3f}",
        ]  # noqa: E501
        for i in range(12)
    ]
    data = tmp_path / "STS-B"
    write_tsv(data / "train.tsv", rows)
    write_tsv(data / "dev.tsv", rows)
    args = classifier_args(setup, tmp_path / "out", "--do_train", "--do_eval")
    args = [
        a.replace("--task_name=MRPC", "--task_name=STS-B").replace(setup["data"], str(data))
        for a in args
    ]  # noqa: E501
    result = run_script(*args, timeout=600, fresh=True)
    assert result.returncode == 0, result.stderr[-3000:]
    results = (tmp_path / "out" / "eval_results.txt").read_text()
    assert "eval_pearson = " in results and "eval_spearmanr = " in results
    assert "eval_accuracy" not in results


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"--task_name": "mrcp"}, "--task_name='mrcp' is not a task; expected one of"),
        (
            {"--max_seq_length": "100"},
            "--max_seq_length=100 is longer than max_position_embeddings=64",
        ),  # noqa: E501
        (  # unset, the flag asks the model: only a casing given against its name is an error
            {
                "--init_checkpoint": "models/cased_L-12_H-768_A-12/bert_model.ckpt",
                "--do_lower_case": "true",
            },
            "--do_lower_case=True does not match --init_checkpoint",
        ),
        ({"--data_dir": "/nonexistent"}, "/nonexistent/train.tsv: no such file"),
        ({"bad_row": True}, "train.tsv:3: 4 tab-separated columns; expected 5"),
        ({"--do_train": "false"}, "holds no checkpoint and no --init_checkpoint"),
        (
            {"--do_train": "false", "pretrained": True},
            "has no BertClassifier head, and --output_dir=",
        ),
    ],
)
def test_bad_input_is_one_error_line(change, message, setup, tmp_path):
    args = classifier_args(setup, tmp_path / "out", "--do_train", "--do_eval")
    if change.pop("bad_row", False):
        rows = mrpc_rows(5, 0)
        rows[2] = rows[2][:4]
        write_tsv(tmp_path / "bad" / "train.tsv", rows)
        args = [a.replace(setup["data"], str(tmp_path / "bad")) for a in args]
    if change.pop("pretrained", False):  # a pre-trained model: an encoder, no classifier
        prefix = save_original_checkpoint(BertEncoder(tiny_config()), tmp_path / "bert" / "m.ckpt")
        args.append(f"--init_checkpoint={prefix}")
    for flag, value in change.items():
        args = [a for a in args if not a.startswith(flag + "=") and a != flag] + [f"{flag}={value}"]  # noqa: E501
    line = error_line(run_script(*args, timeout=300), "run_classifier.py")
    assert message in line, line


@pytest.mark.slow  # over a minute: 2 learning rates x 2 restarts of fine-tuning
def test_the_paper_search_summarizes_learning_rates_and_restarts(setup, tmp_path):
    bert_dir = tmp_path / "bert"
    made = run_script(
        "scripts/make_random_bert.py",
        f"--bert_config_file={setup['config']}",
        f"--output_dir={bert_dir}",
    )
    assert made.returncode == 0, made.stderr[-2000:]
    (bert_dir / "vocab.txt").write_text(open(VOCAB, encoding="utf-8").read(), encoding="utf-8")
    glue_dir = setup["root"]  # holds MRPC/
    result = run_script(
        "scripts/paper/glue_search.py",
        "--tasks=MRPC",
        f"--glue_dir={glue_dir}",
        f"--bert_dir={bert_dir}",
        f"--output_dir={tmp_path / 'search'}",
        "--learning_rates=5e-5,2e-5",
        "--restarts=2",
        "--max_seq_length=32",
        "--train_batch_size=8",
        "--num_train_epochs=1",
        "--max_train_examples=16",
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = (tmp_path / "search" / "summary.tsv").read_text().splitlines()
    assert rows[0].split("\t") == ["task", "metric", "lr", "runs", "mean", "std", "best", "best_lr"]
    assert [row.split("\t")[:4] for row in rows[1:]] == [
        ["MRPC", "eval_f1", "5e-5", "2"],
        ["MRPC", "eval_f1", "2e-5", "2"],
    ]
    assert sum(row.endswith("*") for row in rows[1:]) == 1
    # Table 1: the best run on Dev, its test-set predictions as GLUE's submission file.
    table1 = [
        line.split("\t") for line in (tmp_path / "search" / "table1.tsv").read_text().splitlines()
    ]
    assert table1[0] == ["task", "metric", "dev", "lr", "seed", "submission"]
    assert table1[1][:2] == ["MRPC", "eval_f1"] and table1[2][0] == "Average"
    submission = tmp_path / "search" / "submission" / "MRPC.tsv"
    assert table1[1][5] == str(submission)
    lines = submission.read_text().splitlines()
    assert lines[0] == "index\tprediction" and len(lines) == 1 + 7  # the 7 test rows


def test_a_rerun_reads_the_output_dirs_own_config_so_a_left_to_right_model_stays_causal(
    setup, tmp_path
):
    # A left-to-right pre-trained model: its bert_config.json says causal_attention.
    ltr = tmp_path / "ltr"
    ltr.mkdir()
    causal = tiny_config().replace(causal_attention=True)
    causal.to_json_file(ltr / "bert_config.json")
    save_original_checkpoint(BertEncoder(causal), ltr / "bert_model.ckpt")
    output_dir = tmp_path / "out"
    args = classifier_args(setup, output_dir, "--do_predict")  # --bert_config_file: the shape
    succeeded(run_script(*args, "--do_train", f"--init_checkpoint={ltr / 'bert_model.ckpt'}"))
    assert BertConfig.from_json_file(output_dir / "bert_config.json").causal_attention
    trained = (output_dir / "test_results.tsv").read_text()
    # Predicting again from the output_dir alone (the README's rerun): before, the shape-only
    # --bert_config_file made the causal model bidirectional, pooled at [CLS], silently.
    succeeded(run_script(*args))
    np.testing.assert_allclose(
        np.loadtxt(output_dir / "test_results.tsv", ndmin=2),
        np.loadtxt(io.StringIO(trained), ndmin=2),
        atol=1e-6,
    )
    # A --bert_config_file that disagrees with the output_dir's own is one line naming both.
    relu = tiny_config().replace(hidden_act="relu")
    line = rerun_with_config(setup, args, relu, tmp_path / "relu.json")
    assert line == config_mismatch(tmp_path / "relu.json", output_dir, "hidden_act", "relu", "gelu")


def rerun_with_config(setup, args: list[str], config, path) -> str:
    """The error line of `args` run with `config` (written to `path`) as --bert_config_file."""
    config.to_json_file(path)
    args = [a.replace(setup["config"], str(path)) for a in args]
    return error_line(run_script(*args), "run_classifier.py")


def config_mismatch(config_file, output_dir, key: str, given, trained) -> str:
    return (
        f"run_classifier.py: error: --bert_config_file={config_file}: {key}={given!r}, but "
        f"--output_dir={output_dir} was fine-tuned with {key}={trained!r} (its "
        "bert_config.json); give that config, or another --output_dir"
    )
