"""run_swag.py end to end on a tiny BERT: eval_results.txt with run_classifier's keys,
test_results.tsv (4 probabilities per test example) and predictions.csv, a rerun that
restores the fine-tuned model from output_dir and predicts the same, one clear error line for
each kind of bad input, and the paper's Table 4 script in its small setting."""

from __future__ import annotations

import csv
import functools
import json

import numpy as np
import pytest
from conftest import (
    error_line,
    fine_tuning_args,
    run_script,
    served_json,
    succeeded,
    tiny_config,
    trained_and_exported,
)

HEADER = [
    "video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source",
    "ending0", "ending1", "ending2", "ending3", "label",
]  # fmt: skip
SERVED_COLUMNS = ("sent1", "sent2", "ending0", "ending1", "ending2", "ending3")
OBJECTS = ["ball", "book", "cup", "hat", "phone", "box", "dog", "cat"]


def swag_rows(count: int, seed: int, test: bool = False) -> list[list[str]]:
    """SWAG-format rows whose right ending names the object of the context."""
    rng = np.random.default_rng(seed)
    rows = [HEADER[:-1] if test else HEADER]
    for i in range(count):
        objects = rng.permutation(OBJECTS)[:4]
        label = int(rng.integers(4))
        endings = [f"puts down the {o}." for o in np.roll(objects, label)]
        sent1, sent2 = f"A man holds a {objects[0]}.", "Then he"
        row = [f"v{seed}", str(100 * seed + i), f"{sent1} {sent2}", sent1, sent2, "gold"]
        rows.append(row + endings + ([] if test else [str(label)]))
    return rows


def write_csv(path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("swag")
    data = root / "swag"
    write_csv(data / "train.csv", swag_rows(16, 1))
    write_csv(data / "val.csv", swag_rows(7, 2))
    write_csv(data / "test.csv", swag_rows(5, 3, test=True))
    tiny_config().to_json_file(str(root / "bert_config.json"))
    return {"root": root, "data": str(data), "config": str(root / "bert_config.json")}


def swag_args(setup, output_dir, *extra: str) -> list[str]:
    return fine_tuning_args(
        "run_swag.py", setup["config"], output_dir, *extra,
        data_dir=setup["data"], max_seq_length=24,
    )  # fmt: skip


def read_outputs(output_dir) -> dict:
    return {
        name: (output_dir / name).read_text()
        for name in ("eval_results.txt", "test_results.tsv", "predictions.csv")
    }


@pytest.fixture(scope="module")
def trained(setup) -> dict:
    output_dir, export_dir = setup["root"] / "out", setup["root"] / "export"
    trained_and_exported(functools.partial(swag_args, setup), output_dir, export_dir)
    return {"output_dir": output_dir, "export_dir": export_dir, "outputs": read_outputs(output_dir)}


def test_writes_eval_results_test_probabilities_and_predictions(trained):
    out = trained["output_dir"]
    for name in ("train.tf_record", "eval.tf_record", "predict.tf_record", "ckpt-4.index"):
        assert (out / name).is_file(), name
    assert list((out / "eval").glob("events.out.tfevents.*"))  # TensorBoard eval scalars
    lines = trained["outputs"]["eval_results.txt"].splitlines()
    results = dict(line.split(" = ") for line in lines)
    assert sorted(results) == ["eval_accuracy", "eval_loss", "global_step", "loss"]
    assert results["global_step"] == "4"  # int(16 / 4 * 1)
    assert float(results["eval_accuracy"]) in {i / 7 for i in range(8)}  # 7 real examples
    probabilities = np.loadtxt(out / "test_results.tsv", ndmin=2)
    assert probabilities.shape == (5, 4)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-6)
    rows = list(csv.reader(trained["outputs"]["predictions.csv"].splitlines()))
    assert rows[0] == ["id", "pred"]
    assert [row[0] for row in rows[1:]] == ["300", "301", "302", "303", "304"]  # fold-ind
    assert [int(row[1]) for row in rows[1:]] == probabilities.argmax(axis=1).tolist()


SERVE = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the tokenizer uses)
model = tf.saved_model.load(sys.argv[1])
columns = {name: tf.constant(values) for name, values in json.loads(sys.argv[2]).items()}
text = model.signatures["serving_default"](**columns)
ids = model.signatures["serve"](
    input_ids=tf.ones([1, 4, 5], tf.int32), input_mask=tf.ones([1, 4, 5], tf.int32),
    segment_ids=tf.zeros([1, 4, 5], tf.int32),
)
print(json.dumps({
    "probabilities": text["probabilities"].numpy().tolist(),
    "label_id": text["label_id"].numpy().tolist(),
    "ids_probabilities": list(ids["probabilities"].shape),
    "imported": sorted({m.split(".")[0] for m in sys.modules if m.startswith("bert_tf")}),
}))
"""


def test_the_saved_model_scores_swag_columns_as_the_fine_tuned_model(trained, setup):
    header, *rows = swag_rows(5, 3, test=True)
    columns = {name: [row[header.index(name)] for row in rows] for name in SERVED_COLUMNS}
    served = served_json(SERVE, str(trained["export_dir"]), json.dumps(columns), cwd=setup["root"])
    assert served["imported"] == []  # the SavedModel alone, without bert_tf
    in_process = np.loadtxt(trained["output_dir"] / "test_results.tsv", ndmin=2)
    np.testing.assert_allclose(served["probabilities"], in_process, atol=1e-5)
    assert served["label_id"] == in_process.argmax(axis=1).tolist()
    assert served["ids_probabilities"] == [1, 4]


def test_a_rerun_restores_the_fine_tuned_model_and_predicts_the_same(trained, setup):
    output_dir = trained["output_dir"]
    for name in trained["outputs"]:
        (output_dir / name).unlink()
    result = run_script(
        *swag_args(setup, output_dir, "--do_eval", "--do_predict"), timeout=600, fresh=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "restored" in result.stderr and "ckpt-4" in result.stderr
    assert read_outputs(output_dir) == trained["outputs"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"--data_dir": "/nonexistent"}, "/nonexistent/train.csv: no such file"),
        ({"train.csv": (2, 10, "7")}, "train.csv:3: label '7'; expected the index of the right"),
        ({"val.csv": (1, 8, "")}, "val.csv:2: ending2 is ''; expected the text of each of the"),
        (
            {"--max_seq_length": "100"},
            "--max_seq_length=100 is longer than max_position_embeddings=64",
        ),
    ],
)
def test_bad_input_is_one_error_line(change, message, setup, tmp_path):
    args = swag_args(setup, tmp_path / "out", "--do_train", "--do_eval")
    for name, (row, column, value) in [(k, v) for k, v in change.items() if k.endswith(".csv")]:
        bad = tmp_path / "bad"
        for split, (count, seed) in {"train.csv": (16, 1), "val.csv": (7, 2)}.items():
            rows = swag_rows(count, seed)
            if split == name:
                rows[row][column] = value
            write_csv(bad / split, rows)
        args = [a.replace(setup["data"], str(bad)) for a in args]
    for flag, value in [(k, v) for k, v in change.items() if k.startswith("--")]:
        args = [a for a in args if not a.startswith(flag + "=")] + [f"{flag}={value}"]
    line = error_line(run_script(*args, timeout=300), "run_swag.py")
    assert message in line, line
    assert not (tmp_path / "out" / "eval_results.txt").exists()


# 3 to 5 minutes on 2 cores: the whole Table 4 pipeline. The timeout only catches a hang: a
# loaded machine (a pre-training beside it) took over 10 minutes.
@pytest.mark.slow
def test_paper_table_4_script_runs_small(tmp_path):
    script = ("scripts/paper/swag_table4.sh", "small", str(tmp_path / "out"))
    result = succeeded(run_script(*script, timeout=1800, program="bash"))
    results = dict(
        line.split(" = ")
        for line in (tmp_path / "out" / "eval_results.txt").read_text().splitlines()
    )
    assert sorted(results) == ["eval_accuracy", "eval_loss", "global_step", "loss"]
    assert results["global_step"] == "562"  # int(3000 / 16 * 3)
    assert "eval_accuracy = " in result.stdout
    predictions = (tmp_path / "out" / "predictions.csv").read_text().splitlines()
    assert predictions[0] == "id,pred" and len(predictions) == 1 + 100
