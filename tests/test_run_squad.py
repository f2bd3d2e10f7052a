"""run_squad.py end to end on a tiny BERT: the original's files (predictions.json,
nbest_predictions.json, null_odds.json), the official evaluation, a SavedModel that answers
raw questions exactly as predictions.json does in a process that imports only tensorflow
and tensorflow_text, and one clear error line for each kind of bad input."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import (
    REPO,
    error_line,
    fine_tuning_args,
    run_script,
    served_json,
    succeeded,
    tiny_config,
)

from bert_tf.squad.evaluate import evaluate_v1

SENTENCES = [
    "The Normans were the people who in the 10th and 11th centuries gave their name to "
    "Normandy, a region in France.",
    'They were descended from Norse ("Norman" comes from "Norseman") raiders and pirates '
    "from Denmark, Iceland and Norway.",
    "The leader was John Smith (1895-1943), who lived in Montréal   and\tQuébec.",
    "Steve Smith's team won 3–1 on 12 May 2003, its fourth straight game.",
    "Its capital is Paris; the Seine flows through it\u202fto the sea.",
]


def make_squad(seed: int, count: int, version_2: bool, training: bool) -> dict:
    """Paragraphs of shuffled sentences (some long enough for several windows), questions
    whose answers are words or phrases of them; with version_2 every third is impossible."""
    rng = np.random.default_rng(seed)
    paragraphs = []
    for p in range(count):
        order = rng.permutation(len(SENTENCES))[: 2 + p % 4]
        context = " ".join(SENTENCES[i] for i in order)
        words = [(m.start(), m.group()) for m in re.finditer(r"\S+", context)]
        qas = []
        for q in range(3):
            qid = f"{seed}-{p}-{q}"
            if version_2 and q == 2:
                qas.append({"id": qid, "question": "What is not here?", "answers": [],
                            "is_impossible": True})  # fmt: skip
                continue
            first = int(rng.integers(len(words) - 3))
            start, word = words[first]
            last_start, last_word = words[first + q]
            text = context[start : last_start + len(last_word)]
            answers = [{"text": text, "answer_start": start}]
            if not training:
                answers.append({"text": word, "answer_start": start})
            qa = {"id": qid, "question": f"Where is {word}?", "answers": answers}
            if version_2:
                qa["is_impossible"] = False
            qas.append(qa)
        paragraphs.append({"context": context, "qas": qas})
    return {
        "version": "v2.0" if version_2 else "1.1",
        "data": [{"title": "t", "paragraphs": paragraphs}],
    }


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("squad")
    files = {}
    for name, seed, version_2, training in [
        ("train-v1.1.json", 0, False, True),
        ("dev-v1.1.json", 1, False, False),
        ("train-v2.0.json", 2, True, True),
        ("dev-v2.0.json", 3, True, False),
    ]:
        files[name] = root / name
        files[name].write_text(json.dumps(make_squad(seed, 8, version_2, training)))
    config = tiny_config()
    config.to_json_file(str(root / "bert_config.json"))
    return {"root": root, "config": str(root / "bert_config.json"), **files}


def squad_args(setup, output_dir, *extra: str) -> list[str]:
    return fine_tuning_args(
        "run_squad.py", setup["config"], output_dir, *extra,
        eval_batch_size=None, max_seq_length=64, doc_stride=16, max_query_length=12,
        n_best_size=5, max_answer_length=8,
    )  # fmt: skip


def _run(setup, name: str, version: str, *extra: str) -> dict:
    output_dir, export_dir = setup["root"] / name, setup["root"] / f"{name}_export"
    args = squad_args(
        setup,
        output_dir,
        "--do_train",
        f"--train_file={setup[f'train-v{version}.json']}",
        "--do_predict",
        f"--predict_file={setup[f'dev-v{version}.json']}",
        f"--export_dir={export_dir}",
        *extra,
    )
    result = run_script(*args, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return {"output_dir": output_dir, "export_dir": export_dir, "stdout": result.stdout}


@pytest.fixture(scope="module")
def squad_v1(setup) -> dict:
    return _run(setup, "v1", "1.1")


@pytest.fixture(scope="module")
def squad_v2(setup) -> dict:
    return _run(setup, "v2", "2.0", "--version_2_with_negative", "--null_score_diff_threshold=-0.5")


def test_v1_writes_the_original_files_and_the_official_evaluation(squad_v1, setup):
    out = squad_v1["output_dir"]
    for name in ("train.tf_record", "eval.tf_record", "ckpt-6.index"):  # int(24 / 4 * 1)
        assert (out / name).is_file(), name
    assert not (out / "null_odds.json").exists()
    predictions = json.loads((out / "predictions.json").read_text())
    nbest = json.loads((out / "nbest_predictions.json").read_text())
    dev = json.loads(setup["dev-v1.1.json"].read_text())
    qids = [qa["id"] for p in dev["data"][0]["paragraphs"] for qa in p["qas"]]
    assert list(predictions) == qids and list(nbest) == qids
    for qid in qids:
        assert 1 <= len(nbest[qid]) <= 5
        assert list(nbest[qid][0]) == ["text", "probability", "start_logit", "end_logit"]
        assert nbest[qid][0]["text"] == predictions[qid]
    gold = {qa["id"]: [a["text"] for a in qa["answers"]] for p in dev["data"][0]["paragraphs"]
            for qa in p["qas"]}  # fmt: skip
    metrics = json.loads((out / "eval_results.json").read_text())
    assert metrics == evaluate_v1(gold, predictions)
    assert json.loads(squad_v1["stdout"].splitlines()[-1]) == metrics


def test_v2_writes_null_odds_and_the_v2_evaluation(squad_v2):
    out = squad_v2["output_dir"]
    predictions = json.loads((out / "predictions.json").read_text())
    null_odds = json.loads((out / "null_odds.json").read_text())
    assert list(null_odds) == list(predictions)
    for qid, odds in null_odds.items():
        assert (predictions[qid] == "") == (odds > -0.5)
    metrics = json.loads((out / "eval_results.json").read_text())
    assert list(metrics) == [
        "exact", "f1", "total", "HasAns_exact", "HasAns_f1", "HasAns_total", "NoAns_exact",
        "NoAns_f1", "NoAns_total", "best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh",
    ]  # fmt: skip
    assert metrics["total"] == 24 and metrics["NoAns_total"] == 8


SERVE = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the tokenizer uses)
model = tf.saved_model.load(sys.argv[1])
questions, contexts = json.loads(sys.argv[2])
out = model.signatures["serving_default"](
    question=tf.constant(questions), context=tf.constant(contexts))
ids = model.signatures["serve"](
    input_ids=tf.constant([[2, 7592, 3]]), input_mask=tf.constant([[1, 1, 1]]),
    segment_ids=tf.constant([[0, 0, 1]]))
print(json.dumps({
    "answer": [a.decode() for a in out["answer"].numpy()],
    "null_odds": out["null_odds"].numpy().tolist() if "null_odds" in out else None,
    "start_logits": ids["start_logits"].numpy().shape,
    "imported": sorted({m.split(".")[0] for m in sys.modules if m.startswith("bert_tf")}),
}))
"""


@pytest.mark.parametrize("run, version", [("squad_v1", "1.1"), ("squad_v2", "2.0")])
def test_the_saved_model_answers_raw_text_as_predictions_json(run, version, setup, request):
    trained = request.getfixturevalue(run)
    dev = json.loads(setup[f"dev-v{version}.json"].read_text())
    pairs = [(qa["question"], p["context"]) for p in dev["data"][0]["paragraphs"]
             for qa in p["qas"]]  # fmt: skip
    pairs = json.dumps(list(zip(*pairs, strict=True)))
    served = served_json(SERVE, str(trained["export_dir"]), pairs, cwd=setup["root"])
    assert served["imported"] == []
    predictions = json.loads((trained["output_dir"] / "predictions.json").read_text())
    # Where no span is valid, both have the original's placeholder "empty".
    assert served["answer"] == list(predictions.values())
    if version == "2.0":
        null_odds = json.loads((trained["output_dir"] / "null_odds.json").read_text())
        np.testing.assert_allclose(served["null_odds"], list(null_odds.values()), atol=1e-4)
    assert served["start_logits"] == [1, 3]


def test_rerunning_prediction_uses_the_fine_tuned_checkpoint(squad_v1, setup):
    again = setup["root"] / "v1_again"
    again.mkdir()
    for name in squad_v1["output_dir"].glob("ckpt-6*"):
        (again / name.name).write_bytes(name.read_bytes())
    (again / "checkpoint").write_text((squad_v1["output_dir"] / "checkpoint").read_text())
    result = run_script(
        *squad_args(setup, again, "--do_predict", f"--predict_file={setup['dev-v1.1.json']}"),
        fresh=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (again / "predictions.json").read_text() == (
        squad_v1["output_dir"] / "predictions.json"
    ).read_text()


@pytest.mark.parametrize(
    "content, extra, expected",
    [
        ('{"data": [', (), "not valid JSON"),
        ('{"data": [{"title": "x"}]}', (), "data[0] has no 'paragraphs'"),
        ("v2", (), "--version_2_with_negative"),
        ("v1", ("--max_query_length=61",), "--max_seq_length=64 must be greater than"),
        ("several", (), "has 2 answers; for training each question must have exactly 1"),
    ],
)
def test_bad_input_is_one_error_line_and_no_prediction_file(
    setup, tmp_path, content, extra, expected
):
    if content == "v2":
        content = setup["dev-v2.0.json"].read_text()
    elif content == "v1":
        content = setup["train-v1.1.json"].read_text()
    elif content == "several":
        content = setup["dev-v1.1.json"].read_text()
    data = tmp_path / "data.json"
    data.write_text(content)
    out = tmp_path / "out"
    result = run_script(
        *squad_args(
            setup,
            out,
            "--do_train",
            f"--train_file={data}",
            "--do_predict",
            f"--predict_file={data}",
            *extra,
        )  # fmt: skip
    )
    line = error_line(result, "run_squad.py")
    assert expected in line
    assert not (out / "predictions.json").exists()


@pytest.mark.slow  # CI time: among the longest end-to-end runs
def test_run_squad_trains_and_predicts_with_a_bilstm(setup, tmp_path):
    output_dir = tmp_path / "bilstm"
    result = run_script(
        *squad_args(
            setup,
            output_dir,
            "--do_train",
            f"--train_file={setup['train-v1.1.json']}",
            "--do_predict",
            f"--predict_file={setup['dev-v1.1.json']}",
            "--bilstm",
        ),
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads((output_dir / "predictions.json").read_text())
    assert "exact_match" in json.loads((output_dir / "eval_results.json").read_text())


@pytest.mark.slow  # about a minute: the whole Table 2 pipeline
def test_paper_table_2_script_runs_small(tmp_path):
    squad_dir = REPO.parent / "shared" / "data" / "squad"
    if not (squad_dir / "dev-v1.1.json").is_file():
        pytest.skip("../shared/data/squad is absent")
    script = ("scripts/paper/squad_tables.sh", "2", "small", str(tmp_path / "out"))
    env = {"SQUAD_DIR": str(squad_dir)}
    succeeded(run_script(*script, timeout=600, env=env, program="bash"))
    train = json.loads((tmp_path / "out" / "train.json").read_text())
    qas = [qa for a in train["data"] for p in a["paragraphs"] for qa in p["qas"]]
    assert len(qas) == 300 and all(len(qa["answers"]) == 1 for qa in qas)
    metrics = json.loads((tmp_path / "out" / "eval_results.json").read_text())
    assert list(metrics) == ["exact_match", "f1"]
