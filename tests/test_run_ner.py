"""run_ner.py end to end on a tiny BERT: training, the dev and test files tagged and scored
as conlleval scores them, predictions in the CoNLL format and the file's own tag scheme,
rerun and predict-only, the feature-based setup, and one clear error line for each kind of
bad input."""

from __future__ import annotations

import functools
import re
import shutil

import numpy as np
import pytest
from conftest import (
    REPO,
    SAMPLE_DATA,
    error_line,
    fine_tuning_args,
    run_script,
    tiny_config,
    trained_and_exported,
)

from bert_tf.model_io.saving import save_model_directory
from bert_tf.modeling import BertClassifier
from bert_tf.ner import conlleval
from bert_tf.ner.data import read_conll_file
from bert_tf.training.checkpoints import TrainingCheckpoints

CONLL_DIR = REPO.parent / "shared" / "data" / "conll2003"
WORDS = {
    "PER": ["Peter", "Blackburn", "Smith", "Fischler", "Nikolaus", "van", "der", "Pas"],
    "LOC": ["Germany", "Britain", "Paris", "Bonn", "Brussels", "Bosnia-Herzegovina"],
    "ORG": ["EU", "Commission", "Reuters", "U.S.", "Corp"],
    "MISC": ["German", "British", "European"],
    "O": ["said", "on", "the", "rejects", "call", "to", "boycott", "lamb", ".", ",", "1996-08-22"],
}


def make_conll(seed: int, documents: int, scheme: str = "IOB2") -> str:
    """Documents of random sentences with entities of 1-3 words (some touching), in the
    column format; long documents need several windows at the tests' max_seq_length."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(documents):
        lines += ["-DOCSTART- -X- -X- O", ""]
        for _ in range(int(rng.integers(2, 6))):
            previous = "O"
            for _ in range(int(rng.integers(3, 12))):
                kind = str(rng.choice(list(WORDS), p=[0.1, 0.1, 0.1, 0.1, 0.6]))
                for i in range(1 if kind == "O" else int(rng.integers(1, 4))):
                    word = str(rng.choice(WORDS[kind]))
                    if kind == "O":
                        tag = "O"
                    elif scheme == "IOB2":
                        tag = f"{'B' if i == 0 else 'I'}-{kind}"
                    else:  # IOB1: B only where an entity follows one of its type
                        tag = f"{'B' if i == 0 and previous == kind else 'I'}-{kind}"
                    lines.append(f"{word} NNP B-NP {tag}")
                    previous = kind
            lines.append("")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("ner")
    for name, scheme in (("iob2", "IOB2"), ("iob1", "IOB1")):
        data = root / name
        data.mkdir()
        for split, seed, docs in (("train.txt", 0, 12), ("valid.txt", 1, 4), ("test.txt", 2, 3)):
            (data / split).write_text(make_conll(seed, docs, scheme))
    tiny_config().to_json_file(str(root / "bert_config.json"))
    return {"root": root, "config": str(root / "bert_config.json")}


def ner_args(setup, data: str, output_dir, *extra: str) -> list[str]:
    return fine_tuning_args(
        "run_ner.py", setup["config"], output_dir, *extra,
        data_dir=setup["root"] / data, do_lower_case="false", max_seq_length=32, doc_stride=8,
        num_train_epochs=2,
    )  # fmt: skip


@pytest.fixture(scope="module")
def fine_tuned(setup) -> dict:
    output_dir = setup["root"] / "fine_tuned"
    export_dir = setup["root"] / "fine_tuned_export"
    result = trained_and_exported(
        functools.partial(ner_args, setup, "iob2"), output_dir, export_dir
    )
    return {"output_dir": output_dir, "export_dir": export_dir, "stdout": result.stdout}


def results(path) -> dict:
    return {k: v for k, v in (line.split(" = ") for line in path.read_text().splitlines())}


def test_dev_and_test_are_tagged_and_scored_as_conlleval_scores_them(fine_tuned, setup):
    out = fine_tuned["output_dir"]
    for prefix, split in (("eval", "valid.txt"), ("test", "test.txt")):
        predictions = (out / f"{prefix}_predictions.txt").read_text()
        # The input file, line for line, with the predicted tag appended.
        source = (setup["root"] / "iob2" / split).read_text().splitlines()
        written = predictions.splitlines()
        assert len(written) == len(source)
        for original, line in zip(source, written, strict=True):
            assert line.startswith(original) and (not original or len(line) > len(original))
        report = conlleval.report(conlleval.evaluate_lines(predictions.splitlines(True)))
        assert (out / f"{prefix}_conlleval.txt").read_text() == report
        scores = results(out / f"{prefix}_results.txt")
        f1 = re.search(r"FB1: +([\d.]+)", report.splitlines()[1]).group(1)
        assert float(scores[f"{prefix}_f1"]) == pytest.approx(float(f1), abs=0.006)
        assert {f"{prefix}_precision", f"{prefix}_recall", f"{prefix}_loss", "global_step"} <= set(
            scores
        )
        assert f"{prefix}_PER_f1" in scores
    assert (out / "labels.txt").read_text().split() == [
        "O", "B-LOC", "I-LOC", "B-MISC", "I-MISC", "B-ORG", "I-ORG", "B-PER", "I-PER"
    ]  # fmt: skip
    assert "dev: eval_precision=" in fine_tuned["stdout"]


def test_the_saved_model_finds_the_entities_that_run_ner_predicts(fine_tuned):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the tokenizer's ops)

    from bert_tf.ner.serving import conll_words
    from bert_tf.ner.tagging import chunks

    predicted = read_conll_file(str(fine_tuned["output_dir"] / "eval_predictions.txt"))
    texts, expected = [], []
    for document in predicted.documents:
        words = [w for s in document.sentences for w in s.words]
        guesses = [columns[-1] for s in document.sentences for columns in s.columns]
        text = " ".join(words)
        spans = conll_words(text)
        assert [word for word, _, _ in spans] == words
        texts.append(text)
        expected.append(
            [(t, spans[first][1], spans[last][2]) for t, first, last in chunks(guesses)]
        )
    assert any(expected)
    served = tf.saved_model.load(str(fine_tuned["export_dir"])).signatures["serving_default"](
        text=tf.constant(texts)
    )
    for i, text in enumerate(texts):
        n = int(served["num_entities"][i])
        found = [
            (t.decode(), int(start), int(end))
            for t, start, end in zip(
                served["entity_type"][i, :n].numpy(),
                served["entity_start"][i, :n].numpy(),
                served["entity_end"][i, :n].numpy(),
                strict=True,
            )
        ]
        assert found == expected[i], text


def test_rerun_resumes_and_predict_only_tags_identically(fine_tuned, setup, tmp_path):
    out = fine_tuned["output_dir"]
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    (copy / "eval_predictions.txt").unlink()
    result = run_script(*ner_args(setup, "iob2", copy, "--do_eval"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert (copy / "eval_predictions.txt").read_text() == (out / "eval_predictions.txt").read_text()
    assert results(copy / "eval_results.txt") == results(out / "eval_results.txt")


def test_iob1_files_are_predicted_in_iob1(setup):
    output_dir = setup["root"] / "iob1_out"
    args = ner_args(setup, "iob1", output_dir, "--do_train", "--do_eval", "--num_train_epochs=1")
    result = run_script(*args)
    assert result.returncode == 0, result.stderr[-3000:]
    predicted = read_conll_file(str(output_dir / "eval_predictions.txt"))
    guesses = [[columns[-1] for columns in s.columns] for s in predicted.sentences]
    # IOB1: no B- unless it follows the same type.
    for tags in guesses:
        for before, tag in zip(["O", *tags], tags, strict=False):
            if tag.startswith("B-"):
                assert before[2:] == tag[2:], tags


@pytest.fixture(scope="module")
def feature_based(setup) -> dict:
    config = tiny_config()
    config.num_hidden_layers = 4
    config_file = setup["root"] / "bert_config_4.json"
    config.to_json_file(str(config_file))
    output_dir = setup["root"] / "feature_based"
    args = ner_args(
        {**setup, "config": str(config_file)},
        "iob2",
        output_dir,
        "--do_train",
        "--do_eval",
        "--feature_based=concat_last_four_hidden",
        "--lstm_units=16",
    )
    result = run_script(*args)
    assert result.returncode == 0, result.stderr[-3000:]
    return {"output_dir": output_dir, "stderr": result.stderr}


def test_feature_based_trains_a_bilstm_on_frozen_bert(feature_based):
    assert "a BiLSTM on frozen BERT's concat_last_four_hidden" in feature_based["stderr"]
    assert "eval_f1" in results(feature_based["output_dir"] / "eval_results.txt")


# A fresh interpreter that imports only the model class: the tagger from_pretrained, and the
# run's own model (its checkpoint restored whole, as a rerun restores it) tag the dev records.
FROM_PRETRAINED = """
import json, sys
import numpy as np, tensorflow as tf, keras
from bert_tf.modeling import BertTokenClassifier
out = sys.argv[1]
names = ["input_ids", "input_mask", "segment_ids"]
spec = {name: tf.io.FixedLenFeature([32], tf.int64) for name in names}
file = tf.data.TFRecordDataset(out + "/eval.tf_record")
records = [tf.io.parse_single_example(record, spec) for record in file]
inputs = {name: np.stack([r[name].numpy() for r in records]).astype("int32") for name in names}
loaded = BertTokenClassifier.from_pretrained(out)
run = keras.saving.deserialize_keras_object(json.load(open(out + "/task_model.json"))["model"])
tf.train.Checkpoint(model=run).restore(tf.train.latest_checkpoint(out)).expect_partial()
tags = [m(inputs, training=False)["logits"].numpy().argmax(-1) for m in (loaded, run)]
real = inputs["input_mask"] == 1
print(int(real.sum()), int((tags[0] == tags[1])[real].sum()))
"""


def test_a_feature_based_tagger_from_pretrained_tags_as_the_run(feature_based):
    # Before, 14 of its 87 weights (the scalar mix and the BiLSTM) kept random values.
    out = str(feature_based["output_dir"])
    result = run_script("-c", FROM_PRETRAINED, out)
    assert result.returncode == 0, result.stderr[-3000:]
    real, same = map(int, result.stdout.split())
    assert real > 0 and same == real


def write(path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path.parent)


@pytest.mark.parametrize(
    "case, message",
    [
        ("columns", r"train.txt:4: 3 columns; expected 4 as on line 1$"),
        ("tag", r"train.txt:3: .*B_PER"),
        ("dev_tag", r"valid.txt:1: tag B-CITY is not in the tag set of .*train.txt"),
        ("feature", r"--feature_based=last_layer; expected one of embeddings, "),
        ("no_labels", r"no labels.txt in --output_dir=.*: the label set is written there"),
        # run_classifier.py's output_dir, to predict with or to train in: its task, named.
        ("mrpc_dir", r"--output_dir=.*out: holds a BertClassifier fine-tuned on MRPC, not on C"),
        ("mrpc_dir_train", r"--output_dir=.*out: holds a BertClassifier fine-tuned on MRPC, n"),
    ],
)
def test_bad_input_is_one_clear_line(setup, tmp_path, case, message):
    good = "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nsaid VBD B-VP O\n\n"
    files = {"train.txt": good, "valid.txt": good}
    extra = ["--do_train", "--do_eval"]
    if case == "columns":
        files["train.txt"] = good.replace("said VBD B-VP O", "said VBD O")
    elif case == "tag":
        files["train.txt"] = good.replace("B-ORG", "B_PER")
    elif case == "dev_tag":
        files["valid.txt"] = "Paris NNP B-NP B-CITY\n"
    elif case == "feature":
        extra.append("--feature_based=last_layer")
    elif case == "no_labels":
        extra = ["--do_eval"]
    elif case.startswith("mrpc_dir"):
        mrpc = BertClassifier(tiny_config(), 2)
        save_model_directory(
            str(tmp_path / "out"),
            mrpc,
            str(SAMPLE_DATA / "vocab.txt"),
            True,
            task="MRPC",
            weights=False,
        )
        (tmp_path / "out" / "labels.txt").write_text("0\n1\n")
        TrainingCheckpoints({"model": mrpc}, str(tmp_path / "out")).save(3)
        extra = ["--do_eval", "--do_predict"] if case == "mrpc_dir" else extra
    data_dir = None
    for name, text in files.items():
        data_dir = write(tmp_path / "data" / name, text)
    args = [*ner_args(setup, "iob2", tmp_path / "out", *extra), f"--data_dir={data_dir}"]
    line = error_line(run_script(*args), "run_ner.py")
    assert re.search(message, line), line
    assert not (tmp_path / "out" / "eval_predictions.txt").exists()


@pytest.mark.skipif(not CONLL_DIR.is_dir(), reason="../shared/data/conll2003 is absent")
def test_real_conll2003_sample_runs(tmp_path):
    data = tmp_path / "data"
    for split, count in (("train.txt", 40), ("valid.txt", 20)):
        result = run_script(
            "scripts/conll_sample.py",
            f"--input_file={CONLL_DIR / split}",
            f"--output_file={data / split}",
            f"--count={count}",
        )
        assert result.returncode == 0, result.stderr
    sample = read_conll_file(str(data / "valid.txt"))
    assert len(sample.sentences) == 20 and sample.documents[0].docstart
    config = tmp_path / "bert_config.json"
    tiny_config().to_json_file(str(config))
    args = ner_args({"root": tmp_path, "config": str(config)}, "data", tmp_path / "out")
    result = run_script(*args, "--do_train", "--do_eval", "--num_train_epochs=1", fresh=True)
    assert result.returncode == 0, result.stderr[-3000:]
    report = (tmp_path / "out" / "eval_conlleval.txt").read_text()
    words = sum(len(s.words) for s in sample.sentences) + len(sample.documents)
    assert report.startswith(f"processed {words} tokens with ")
