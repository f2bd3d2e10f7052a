"""scripts/paper/: the reproduction of the paper's tables. The stand-in data sets, the commands
each size runs (the paper's settings for base and large, as dry runs), and every `small`
script end to end at --quick size (slow)."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, SCRIPT_ENV, error_line, run_script, succeeded, write_tsv

sys.path.insert(0, str(REPO / "scripts" / "paper"))

import plot_reproduction  # noqa: E402
from doc_tables import DocTablesOptions, doc_tables, record_pages, render_doc  # noqa: E402
from plot_reproduction import perplexity_curves, pretraining_groups  # noqa: E402
from reproduction.finetuning import Score, _choose  # noqa: E402
from reproduction.pretraining import write_results, write_training  # noqa: E402
from reproduction.record import cells, figure, read_runs  # noqa: E402
from reproduction.tables import Table  # noqa: E402
from standin_data import qnli_from_squad, split_squad, swag_from_books  # noqa: E402

from bert_tf.errors import InputError  # noqa: E402
from bert_tf.squad.data import read_squad_file  # noqa: E402

SHARED = REPO.parent / "shared" / "data"


def squad(articles: int) -> dict:
    data = []
    for a in range(articles):
        context = f"Article {a} begins here. The answer is blue{a}. Nothing else is said."
        qas = [
            {
                "id": f"q{a}",
                "question": f"What is the answer of article {a}?",
                "answers": [{"text": f"blue{a}", "answer_start": context.index("blue")}] * 2,
            }
        ]
        data.append({"title": f"t{a}", "paragraphs": [{"context": context, "qas": qas}]})
    return {"version": "1.1", "data": data}


def test_squad_is_split_by_article_and_trains_on_first_answers(tmp_path: Path):
    (tmp_path / "dev.json").write_text(json.dumps(squad(10)))
    split_squad(str(tmp_path / "dev.json"), tmp_path / "train.json", tmp_path / "eval.json")
    train = read_squad_file(str(tmp_path / "train.json"))["data"]
    evaluation = read_squad_file(str(tmp_path / "eval.json"))["data"]
    assert [a["title"] for a in evaluation] == ["t4", "t9"]
    assert len(train) == 8 and not {a["title"] for a in train} & {"t4", "t9"}
    assert all(len(qa["answers"]) == 1 for a in train for qa in a["paragraphs"][0]["qas"])
    assert all(len(qa["answers"]) == 2 for a in evaluation for qa in a["paragraphs"][0]["qas"])


def test_qnli_pairs_a_question_with_its_answers_sentence_and_another(tmp_path: Path):
    (tmp_path / "squad.json").write_text(json.dumps(squad(3)))
    assert qnli_from_squad(str(tmp_path / "squad.json"), str(tmp_path / "train.tsv")) == 6
    with open(tmp_path / "train.tsv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert [row["label"] for row in rows] == ["entailment", "not_entailment"] * 3
    for i, row in enumerate(rows):
        article = i // 2
        assert row["question"] == f"What is the answer of article {article}?"
        holds = f"blue{article}" in row["sentence"]
        assert holds == (row["label"] == "entailment")


def test_the_stand_ins_build_from_the_command_line_and_bad_input_is_one_line(tmp_path: Path):
    (tmp_path / "dev.json").write_text(json.dumps(squad(10)))
    script = "scripts/paper/standin_data.py"
    flags = [f"--input_file={tmp_path / 'dev.json'}", f"--output={tmp_path / 'train.json'}"]
    succeeded(run_script(script, "--stand_in=split_squad", *flags, f"--eval_file={tmp_path / 'e'}"))
    assert len(read_squad_file(str(tmp_path / "train.json"))["data"]) == 8
    result = run_script(script, "--stand_in=split_squad", *flags)
    assert "--stand_in=split_squad: give --eval_file too" in error_line(result, "standin_data.py")
    result = run_script(script, "--stand_in=mnli_from_squad", *flags)
    assert "--stand_in" in error_line(result, "standin_data.py")


def test_the_stand_ins_keep_the_first_examples_the_caps_ask_for(tmp_path: Path):
    script = "scripts/paper/standin_data.py"
    (tmp_path / "dev.json").write_text(json.dumps(squad(10)))
    caps = ["--max_train_examples=3", "--max_eval_examples=1"]
    flags = [f"--input_file={tmp_path / 'dev.json'}", f"--output={tmp_path / 'train.json'}"]
    flags += [f"--eval_file={tmp_path / 'eval.json'}", "--eval_every=4"]  # SQuAD 2.0's split
    succeeded(run_script(script, "--stand_in=split_squad", *flags, *caps))
    train = read_squad_file(str(tmp_path / "train.json"))["data"]
    assert [a["title"] for a in train] == ["t0", "t1", "t2"]  # one question per article
    assert [a["title"] for a in read_squad_file(str(tmp_path / "eval.json"))["data"]] == ["t3"]
    glue = tmp_path / "SST-2"
    glue.mkdir()
    sentences = [f"sentence {i}\t{i % 2}\n" for i in range(5)]
    for name in ("train.tsv", "dev.tsv"):
        (glue / name).write_text("sentence\tlabel\n" + "".join(sentences))
    (glue / "test.tsv").write_text("index\tsentence\n0\tkept whole\n")
    flags = [f"--input_file={glue}", f"--output={tmp_path / 'capped'}", *caps]
    succeeded(run_script(script, "--stand_in=glue_subset", "--task=SST-2", *flags))
    capped = {p.name: p.read_text().splitlines() for p in (tmp_path / "capped").iterdir()}
    assert capped["train.tsv"][1:] == [line.strip() for line in sentences[:3]]  # header kept
    assert capped["dev.tsv"][1:] == ["sentence 0\t0"]
    assert capped["test.tsv"] == ["index\tsentence", "0\tkept whole"]
    result = run_script(script, "--stand_in=glue_subset", *flags)
    assert "--stand_in=glue_subset: give --task too" in error_line(result, "standin_data.py")


def test_dry_run_lists_the_stand_ins_before_the_steps_that_read_them(tmp_path: Path):
    # A user who runs --dry_run's commands in order gets the files each reads (issue 59 found a
    # steps file whose QNLI, SST-2 and SQuAD inputs were built by reproduce.py inline, unlisted).
    commands = [c for c in laptop_dry_run("long", tmp_path).splitlines() if c[:2] != "# "]
    data = tmp_path / "out" / "data"

    def first(text: str) -> int:
        return next(i for i, command in enumerate(commands) if text in command)

    qnli = first(f"--output={data}/glue/QNLI/train.tsv ")
    assert first(f"--output={data}/glue/QNLI/dev.tsv ") < first(f"--data_dir={data}/glue/QNLI ")
    squad = first(f"--eval_file={data}/squad/dev-v1.1.json ")
    assert squad < qnli and squad < first(f"--predict_file={data}/squad/dev-v1.1.json ")
    sst2 = first("--stand_in=glue_subset --task=SST-2 ")
    assert "--max_train_examples=8000 " in commands[sst2]
    assert sst2 < first(f"--data_dir={data}/glue/SST-2 ")
    assert first(f"--output={data}/swag_books ") < first(f"--data_dir={data}/swag_books ")


def test_swag_from_books_offers_the_true_continuation_among_four(tmp_path: Path):
    sentences = [f"Sentence number {i} of the book tells part {i} of it." for i in range(30)]
    (tmp_path / "corpus.txt").write_text("\n".join(sentences) + "\n\n")
    counts = swag_from_books(str(tmp_path / "corpus.txt"), str(tmp_path / "swag"))
    assert counts == {"train": 23, "dev": 6}
    with open(tmp_path / "swag" / "train.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for i, row in enumerate(rows):
        assert row["sent1"] == sentences[i] and row["sent2"] == "Sentence number"
        endings = [row[f"ending{k}"] for k in range(4)]
        assert endings[int(row["label"])] == f"{i + 1} of the book tells part {i + 1} of it."
        assert len(set(endings)) == 4


def test_the_perplexity_figure_follows_each_run_measured_along_the_way():
    def row(run, tokens, perplexity, schedule="long"):
        return {
            "schedule": schedule, "run": run, "tokens": tokens,
            "mask_only_masked_lm_perplexity": perplexity,
        }  # fmt: skip

    base, wide = "L-4_H-128_A-2_mlm_nsp_0.8_0.1_0.1", "L-8_H-192_A-3_mlm_nsp_0.8_0.1_0.1_warmup4000"
    rows = [
        row(base, "154146944", "57.8"),
        row(base + "_step16000", "61658778", "263.3"),
        row(base + "_step8000", "30829389", "626.1"),
        row("L-4_H-128_A-2_mlm_0.8_0.1_0.1", "154146944", "-"),  # MLM only: no [MASK] eval
        row("L-4_H-128_A-2_mlm_nsp_1.0_0.0_0.0", "154146944", "60.0"),  # its end alone: no curve
        row("L-4_H-128_A-2_mlm_nsp_0.8_0.1_0.1_step24000", "-", "-"),  # pending
        row("unigram", "-", "760.7"),
    ]
    curves, unigram = perplexity_curves(rows)
    assert curves == {base: [(30829389, 626.1), (61658778, 263.3), (154146944, 57.8)]}
    assert unigram == 760.7
    # Table 6's shapes at another schedule: each its own curve, named with its schedule.
    rows += [
        row(wide + "_step8000", "30829389", "500.0", "long40k"),
        row(wide, "154146944", "30.0", "long40k"),
    ]
    curves, _ = perplexity_curves(rows)
    assert list(curves) == [f"long {base}", f"long40k {wide}"]
    assert curves[f"long40k {wide}"] == [(30829389, 500.0), (154146944, 30.0)]
    assert perplexity_curves([]) == ({}, None)


def test_the_pretraining_figure_draws_only_the_panels_with_a_finished_run(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import tensorflow as tf

    from bert_tf.training.summaries import write_summaries

    out = tmp_path / "out"
    finished = out / "pretraining" / "L-8_H-192_A-3_mlm_nsp_0.8_0.1_0.1_warmup4000"
    (finished / "pretrained").mkdir(parents=True)
    (out / "pretraining" / "L-4_H-192_A-3_mlm_nsp_0.8_0.1_0.1_warmup4000").mkdir()  # under way
    writer = tf.summary.create_file_writer(str(finished / "train"))
    for step, loss in ((1000, 6.4), (2000, 6.1)):
        write_summaries(writer, {"masked_lm_loss": loss}, step)  # as run_pretraining.py's
    write_tsv(out / "tables" / "pretraining.tsv", [["schedule", "run"], ["long40k", "x"]])
    drawn = []
    monkeypatch.setattr(plot_reproduction, "save", lambda figure, *_: drawn.append(figure) or "x")
    assert plot_reproduction.plot_pretraining(str(out), str(tmp_path / "figures"))
    (axis,) = drawn[0].axes  # Table 6's panel alone: no empty Table 5 and 8 panels
    assert axis.get_title() == "size (Table 6)"
    (line,) = axis.get_lines()
    np.testing.assert_allclose(line.get_ydata(), [6.4, 6.1], rtol=1e-6)  # float32 summaries


def test_the_figure5_figure_draws_one_schedules_committed_cells(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    header = ["schedule", "row", "column", "ours", "paper_row", "paper", "spread", "lr"]
    cells = [
        ["long40k", "MLM step 8000", "QNLI", "60.9", "MLM step 8000", "-", "-", "0.0001"],
        ["long40k", "MLM step 16000", "QNLI", "63.2", "MLM step 16000", "-", "-", "0.0001"],
        ["long40k", "LTR step 8000", "QNLI", "56.6", "LTR step 8000", "-", "-", "0.0001"],
        ["long40k", "LTR step 16000", "QNLI", "-", "LTR step 16000", "-", "-", "-"],  # to come
        ["long", "MLM step 8000", "QNLI", "63.3", "MLM step 8000", "-", "-", "0.0001"],
    ]  # fmt: skip
    write_tsv(tmp_path / "docs" / "figure5.tsv", [header, *cells])
    drawn = []
    monkeypatch.setattr(plot_reproduction, "save", lambda figure, *_: drawn.append(figure) or "x")
    out, figures, docs = str(tmp_path / "out"), str(tmp_path / "figures"), str(tmp_path / "docs")
    assert plot_reproduction.plot_figure5(out, figures, docs, "long40k")
    (axis,) = drawn[0].axes
    mlm, ltr = axis.get_lines()
    assert list(mlm.get_xdata()) == [8000, 16000] and list(mlm.get_ydata()) == [60.9, 63.2]
    assert list(ltr.get_xdata()) == [8000] and list(ltr.get_ydata()) == [56.6]
    # Several schedules and none chosen: which one would be a guess.
    with pytest.raises(InputError, match=r"figure5.tsv holds the schedules long, long40k; "
                       r"expected --schedule=one of them"):  # fmt: skip
        plot_reproduction.plot_figure5(out, figures, docs)
    # A schedule the file does not hold is a mistyped flag, not a figure with nothing in it.
    with pytest.raises(InputError, match=r"--schedule=long4k: .*figure5.tsv has no row of it; "
                       r"it holds long, long40k"):  # fmt: skip
        plot_reproduction.plot_figure5(out, figures, docs, "long4k")


def test_plot_reproduction_draws_the_chosen_figures_from_the_committed_cells(tmp_path):
    script, docs = "scripts/paper/plot_reproduction.py", str(Path(REPO) / "docs" / "reproduction")
    flags = (f"--output_dir={tmp_path / 'out'}", f"--figures_dir={tmp_path / 'figures'}")
    result = run_script(script, *flags, "--figures=figure6_steps")
    assert error_line(result, "plot_reproduction.py").endswith(
        "--figures=figure6_steps; unknown figure6_steps, expected some of table6_model_size, "
        "figure5_steps, pretraining_curves, mask_only_perplexity or all"
    )
    # The committed TSVs hold every schedule: drawing them needs one named.
    result = run_script(script, *flags, f"--tables_dir={docs}", "--figures=figure5_steps")
    assert "figure5.tsv holds the schedules long, long40k, small; expected --schedule" in (
        error_line(result, "plot_reproduction.py")
    )
    pytest.importorskip("matplotlib")
    succeeded(run_script(script, *flags, f"--tables_dir={docs}", "--schedule=long40k",
                         "--figures=figure5_steps"))  # fmt: skip
    assert os.listdir(tmp_path / "figures") == ["figure5_steps.png"]  # the chosen one alone


def test_a_table_sets_our_numbers_beside_the_papers(tmp_path: Path):
    table = Table("table5", "Table 5")
    table.set("BERT", "MRPC", Score(71.234, spread=1.53, learning_rate=3e-4), "BERT-BASE")
    table.set("BERT", "SQuAD", None, "BERT-BASE")
    table.set("BERT", "SST-2", 80.0, "BERT-BASE")
    table.notes.append("MNLI-m: RTE.")
    table.write(str(tmp_path), "long")
    lines = (tmp_path / "table5.tsv").read_text().splitlines()
    assert lines == [
        "schedule\trow\tcolumn\tours\tpaper_row\tpaper\tspread\tlr",
        "long\tBERT\tMRPC\t71.2\tBERT-BASE\t86.7\t1.53\t0.0003",
        "long\tBERT\tSQuAD\t-\tBERT-BASE\t88.5\t-\t-",
        "long\tBERT\tSST-2\t80.0\tBERT-BASE\t92.7\t-\t-",
    ]
    markdown = (tmp_path / "table5.md").read_text()
    assert "| BERT (BERT-BASE) | 71.2 ±1.53 / 86.7 | - / 88.5 | 80.0 / 92.7 |" in markdown
    assert "- MNLI-m: RTE." in markdown


GLUE_TASKS = ("MNLI", "QQP", "QNLI", "SST-2", "CoLA", "STS-B", "MRPC", "RTE", "WNLI")


def paper_data(tmp_path: Path) -> dict:
    """The environment of a run at the paper's sizes: every data set the tables need, as
    empty files and folders where they belong (a dry run reads none of them)."""
    data = tmp_path / "data"
    files = ["corpus.txt", "heldout.txt", "vocab.txt", "cased_vocab.txt"]
    files += ["swag/train.csv", "swag/val.csv"]
    files += [f"squad/{s}-v{v}.json" for s in ("train", "dev") for v in ("1.1", "2.0")]
    files += [f"conll/{split}.txt" for split in ("train", "valid", "test")]
    files += [f"glue/{task}/train.tsv" for task in GLUE_TASKS]
    files += ["glue/MNLI/test_matched.tsv", "glue/MRPC/test.tsv", "glue/diagnostic/diagnostic.tsv"]
    for name in files:
        (data / name).parent.mkdir(parents=True, exist_ok=True)
        (data / name).write_text("")
    return {
        **SCRIPT_ENV,
        **{name: str(data / f"{name.lower()}.txt") for name in ("CORPUS", "HELDOUT", "VOCAB")},
        "CASED_VOCAB": str(data / "cased_vocab.txt"),
        **{f"{name.upper()}_DIR": str(data / name) for name in ("glue", "squad", "swag", "conll")},
        "BERT_DIR": str(data / "bert"),
    }


def dry_run(script: str, size: str, tmp_path: Path, **env) -> str:
    env = {**paper_data(tmp_path), **env}
    command = (f"scripts/paper/{script}", size, str(tmp_path / "out"), "--dry_run")
    return succeeded(run_script(*command, timeout=120, env=env, program="bash")).stdout


# Every script of scripts/paper that runs steps, with its arguments before SIZE.
PAPER_SCRIPTS = [
    ("reproduce_all.sh",), ("reproduce_tables.sh", "table2"), ("table5_ablation.sh",),
    ("table6_model_size.sh",), ("table8_masking.sh",), ("figure5_steps.sh",),
    ("glue_table1.sh",), ("squad_tables.sh", "3"), ("swag_table4.sh",), ("ner_table7.sh",),
]  # fmt: skip


@pytest.mark.parametrize("script", PAPER_SCRIPTS, ids=lambda script: script[0])
def test_a_dry_run_in_any_position_prints_every_step_and_runs_nothing(script, tmp_path: Path):
    out = tmp_path / "out"
    # --dry_run first for half of the scripts, last for the others.
    first = PAPER_SCRIPTS.index(script) % 2
    args = [*script[1:], "base", str(out)]
    args = ["--dry_run", *args] if first else [*args, "--dry_run"]
    result = run_script(
        f"scripts/paper/{script[0]}", *args, env=paper_data(tmp_path), program="bash"
    )
    commands = succeeded(result).stdout
    assert "run_" in commands or "glue_search.py" in commands
    assert not out.exists()  # nothing ran, nothing was made
    if script[0] == "squad_tables.sh":  # the re-prediction with tau chosen on Dev too
        assert "--null_score_diff_threshold=" in commands


def test_table4_fine_tunes_swag_from_the_pre_trained_model_and_from_random_weights(tmp_path):
    out = tmp_path / "out"
    result = run_script(
        "scripts/paper/reproduce_tables.sh", "table4", "base", str(out), "--dry_run",
        env=paper_data(tmp_path), program="bash",
    )  # fmt: skip
    swag = [line for line in succeeded(result).stdout.splitlines() if "run_swag.py" in line]
    starts = [re.search(r"--init_checkpoint=(\S+)", line).group(1) for line in swag]
    assert len(starts) == 2
    assert "pretrained" in starts[0] and "_random" in starts[1]


def test_table1_at_base_predicts_each_tasks_test_set_and_glues_diagnostic_with_mnli(tmp_path):
    out = str(tmp_path / "out")
    script = ("scripts/paper/reproduce_tables.sh", "table1", "base", out, "--dry_run")
    commands = succeeded(run_script(*script, env=paper_data(tmp_path), program="bash")).stdout
    steps = [line for line in commands.splitlines() if line.startswith("# ")]
    # MNLI's test sets are test_matched/mismatched.tsv, not test.tsv: predicted too.
    assert any(step.endswith("MNLI/0/predict") for step in steps)
    assert any(step.endswith("MRPC/0/predict") for step in steps)
    (ax,) = [line for line in commands.splitlines() if "--task_name=AX" in line]
    assert "--do_predict=True" in ax and "/finetuning/" in ax and "MNLI" in ax


def test_the_glue_submission_zips_a_file_per_task_under_glues_names(tmp_path: Path):
    from reproduction.submission import GLUE_FILES, majority_predictions, write_submission

    wnli = tmp_path / "WNLI"
    header = ["index", "sentence1", "sentence2", "label"]
    write_tsv(
        wnli / "train.tsv",
        [header, ["0", "a", "b", "1"], ["1", "c", "d", "1"], ["2", "e", "f", "0"]],
    )
    write_tsv(wnli / "test.tsv", [header[:3]] + [[str(i), "x", "y"] for i in range(4)])
    files = {}
    for number, name in enumerate(GLUE_FILES[:-2]):  # all but WNLI's and AX's
        files[name] = tmp_path / "runs" / name
        write_tsv(files[name], [["index", "prediction"]] + [[str(i), "1"] for i in range(number)])
    files["WNLI.tsv"] = tmp_path / "WNLI.tsv"
    assert majority_predictions(str(wnli), str(files["WNLI.tsv"])) == 4
    archive = tmp_path / "glue_submission.zip"
    assert write_submission({k: str(v) for k, v in files.items()}, str(archive)) == ["AX.tsv"]
    with zipfile.ZipFile(archive) as zipped:
        assert zipped.namelist() == list(GLUE_FILES[:-1])  # at the top, GLUE's names
        rows = {name: zipped.read(name).decode().splitlines() for name in zipped.namelist()}
    assert [len(rows[name]) - 1 for name in GLUE_FILES[:-2]] == list(range(9))
    assert rows["WNLI.tsv"] == ["index\tprediction"] + [f"{i}\t1" for i in range(4)]


def test_a_missing_out_or_data_set_at_base_is_one_line_each_before_any_work(tmp_path: Path):
    env = paper_data(tmp_path)
    result = run_script(
        "scripts/paper/reproduce_all.sh", "base", "--dry_run", env=env, program="bash"
    )
    assert "give OUT at size base" in error_line(result, "reproduce_all.sh")

    shutil.rmtree(Path(env["GLUE_DIR"]) / "QNLI")
    del env["SWAG_DIR"]
    out = tmp_path / "out"
    result = run_script("scripts/paper/reproduce_all.sh", "base", str(out), env=env, program="bash")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert errors == [
        f"reproduce.py: error: GLUE_DIR={env['GLUE_DIR']}: no {env['GLUE_DIR']}/QNLI; expected "
        "GLUE's task folders (download_glue_data.py's)",
        "reproduce.py: error: SWAG_DIR is not set; expected SWAG's train.csv and val.csv",
    ]  # and no stand-in: QNLI is not built from SQuAD, nor SWAG from the held-out text
    assert not out.exists()


def test_every_model_step_at_base_runs_on_the_accelerator_with_the_users_extra_flags(
    tmp_path: Path,
):
    extra = "--gradient_accumulation_steps=2"
    commands = dry_run(
        "table5_ablation.sh", "base", tmp_path, PLATFORM="tpu", TPU_NAME="pod", EXTRA_FLAGS=extra
    ).splitlines()
    models = [line for line in commands if "run_classifier.py" in line or "run_squad.py" in line]
    assert models and all("--use_tpu=True --tpu_name=pod" in line for line in models)
    pretraining = [line for line in commands if "pretrain_bert.sh" in line]
    assert pretraining and all("--objective=" in line and extra in line for line in pretraining)
    commands = dry_run("table5_ablation.sh", "base", tmp_path / "gpu").splitlines()
    models = [line for line in commands if "run_classifier.py" in line]
    assert all("--distribution_strategy=mirrored" in line for line in models)


def test_pretrain_bert_on_a_tpu_accumulates_where_a_core_holds_less_than_its_share(tmp_path):
    env = {**SCRIPT_ENV, "PLATFORM": "tpu", "TPU_NAME": "pod", "OUT": "gs://bucket/large"}
    result = run_script(
        "scripts/paper/pretrain_bert.sh", "large", "--dry_run", env=env, program="bash"
    )
    phases = [line for line in succeeded(result).stdout.splitlines() if "run_pretraining" in line]
    # 256 sequences on 8 cores of 8 (phase 1) and of 2 (phase 2, 512 tokens) sequences
    assert ["--gradient_accumulation_steps=4" in phases[0], "=16" in phases[1]] == [True, True]
    assert "--output_dir=gs://bucket/large/phase1" in phases[0]
    assert not (REPO / "gs:").exists()  # no local folder named after the URL


def test_table6_base_pretrains_the_papers_six_shapes_and_restarts_five_times(tmp_path: Path):
    commands = dry_run("table6_model_size.sh", "base", tmp_path)
    for shape in ("3_H-768_A-12", "6_H-768_A-3", "6_H-768_A-12", "12_H-768_A-12", "12_H-1024_A-16"):
        assert f"pretrain_bert.sh L-{shape}\n" in commands
    assert "pretrain_bert.sh L-24_H-1024_A-16\n" in commands
    assert "HELDOUT_DATA=" in commands and "--keep_checkpoint_every_n_steps=200000" in commands
    mnli = [line for line in commands.splitlines() if "--task_name=MNLI" in line]
    assert len(mnli) == 6 * 5  # five restarts per shape
    assert all("--learning_rate=2e-05" in line and "--seed=" in line for line in mnli)


def test_table8_base_writes_data_with_each_masking_rate(tmp_path: Path):
    commands = dry_run("table8_masking.sh", "base", tmp_path)
    for rates in ("0.8,0.1,0.1", "1.0,0.0,0.0", "0.8,0.0,0.2", "0.8,0.2,0.0", "0.0,0.2,0.8"):
        assert f"--masking_rates={rates} " in commands
    assert "--feature_based=concat_last_four_hidden" in commands
    assert "--lstm_units=768" in commands
    # every row's model (and the no-pre-training floor's) is also measured on the same
    # all-[MASK] held-out records
    mask_only = [line for line in commands.splitlines() if "/eval_mask_only " in line]
    assert len(mask_only) == 7 and sum("_random_cased/" in line for line in mask_only) == 1
    # cased, as the NER columns' models (Table 7's)
    assert all("1.0_0.0_0.0_cased/heldout/phase2_seq512/" in line for line in mask_only)


def test_figure5_large_fine_tunes_the_kept_phase_1_checkpoints(tmp_path: Path):
    commands = dry_run("figure5_steps.sh", "large", tmp_path)
    for step in (200000, 400000, 600000, 800000):
        assert f"phase1/kept/ckpt-{step} " in commands
    assert "phase2/pretrained/bert_model.ckpt " in commands
    assert "--objective=ltr" in commands


def test_table5_base_fine_tunes_the_ltr_model_with_a_bilstm(tmp_path: Path):
    commands = dry_run("table5_ablation.sh", "base", tmp_path)
    for objective in ("mlm_nsp", "mlm", "ltr"):
        assert f"--objective={objective} " in commands
    bilstm = [line for line in commands.splitlines() if "--bilstm=True" in line]
    assert {"run_classifier.py" in line for line in bilstm} == {True, False}  # + run_squad
    assert all("_ltr_" in line for line in bilstm)


def laptop_dry_run(size: str, tmp_path: Path, tables: str = "all") -> str:
    """reproduce.py --dry_run at a laptop size, on stand-ins for ../shared/data's folders."""
    for folder in ("books", "glue/RTE", "glue/MRPC", "glue/SST-2", "squad", "conll"):
        (tmp_path / "data" / folder).mkdir(parents=True)
    (tmp_path / "data" / "books" / "001.txt").write_text("A book.\n")
    env = {
        **SCRIPT_ENV,
        **{f"{name.upper()}_DIR": str(tmp_path / "data" / name) for name in ("books", "glue")},
        **{f"{name.upper()}_DIR": str(tmp_path / "data" / name) for name in ("squad", "conll")},
    }
    script = str(REPO / "scripts" / "paper" / "reproduce.py")
    command = [sys.executable, script, f"--tables={tables}", f"--size={size}", "--dry_run"]
    command.append(f"--output_dir={tmp_path / 'out'}")
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_long_pretrains_ten_times_longer_than_small_on_as_many_new_masks(tmp_path: Path):
    commands = laptop_dry_run("long", tmp_path).splitlines()
    base = [c for c in commands if "run_pretraining.py" in c and "L-4_H-128_A-2_mlm_nsp_" in c]
    base = [c for c in base if "--do_train" in c and "_20000steps" not in c]
    assert len(base) == 1
    for flag in (
        "--num_train_steps=40000",
        "--num_warmup_steps=400",
        "--train_batch_size=32",
        "--learning_rate=0.001",
        "--resume_input=True",
        "--keep_checkpoint_every_n_steps=8000",
        "--save_checkpoints_steps=1000",
    ):
        assert f"{flag} " in base[0] + " ", flag  # fmt: skip
    train_data = [c for c in commands if "create_pretraining_data.py" in c and "train.tf" in c]
    assert train_data and all("--dupe_factor=15 " in c for c in train_data)
    # Tables 6 and 8 at half the steps (5x small's tokens), warm-up the same 1%, and a rate that
    # trains their widest shapes (at 1e-3 4/192/3 stays at the unigram level)
    half = [c for c in commands if "--num_train_steps=20000 " in c]
    assert len(half) == 6 + 5  # six shapes; five more maskings (80/10/10 is Table 6's 4/128/2)
    for flag in ("--num_warmup_steps=200 ", "--learning_rate=0.0005 ", "_20000steps_lr0.0005/"):
        assert all(flag in c for c in half), flag
    # Figure 5: five points of the MLM and LTR runs
    for step in (8000, 16000, 24000, 32000):
        assert any(f"kept/ckpt-{step} " in c and "_ltr_" in c for c in commands)


def test_long40k_pretrains_tables_6_and_8_as_the_base_model_with_a_tenth_as_warm_up(tmp_path):
    commands = laptop_dry_run("long40k", tmp_path).splitlines()
    pretraining = [c for c in commands if "run_pretraining.py" in c and "--do_train" in c]
    own = [c for c in pretraining if "_warmup4000/" in c]
    # Six shapes; five more maskings (80/10/10 is Table 6's 4/128/2); Table 5's No NSP and LTR
    # (its BERT row is Table 6's 4/128/2 too), whose kept checkpoints are Figure 5's.
    assert len(own) == 6 + 5 + 2
    assert {re.search(r"_(mlm|ltr)_0.8_0.1_0.1_warmup4000/", c) is not None for c in own} == {
        True, False
    }  # fmt: skip
    for flag in ("--num_train_steps=40000 ", "--num_warmup_steps=4000 ", "--learning_rate=0.001 "):
        assert all(flag in c for c in own), flag
    # Figure 5's curves at that recipe: QNLI on each kept checkpoint of the MLM and LTR runs.
    qnli = [c for c in commands if "run_classifier.py" in c and "--task_name=QNLI" in c]
    for run in ("mlm_nsp", "ltr"):
        kept = f"L-4_H-128_A-2_{run}_0.8_0.1_0.1_warmup4000/kept/ckpt-8000"
        assert any(kept in c for c in qnli), run
    # Tables 1-4 and 7 are long's own runs (the same names, shared), all without XLA.
    assert any("/L-4_H-128_A-2_mlm_nsp_0.8_0.1_0.1/" in c for c in pretraining)
    assert all("--use_xla=False " in c for c in pretraining)
    # Table 6 runs widest first, so that a shape that does not train shows early.
    table6 = [re.search(r"pretraining/(L-\d+_H-\d+_A-\d+)_mlm_nsp_0.8", c) for c in own]
    # (The base shape's run comes first: Table 5, which runs before, has it as its BERT row.)
    shapes = [m.group(1) for m in table6 if m and m.group(1) != "L-4_H-128_A-2"]
    assert shapes[:2] == ["L-8_H-192_A-3", "L-4_H-192_A-3"]
    # Each shape's [MASK]-only perplexity along the way: its four kept checkpoints and its end.
    mask_only = [c for c in commands if "/eval_mask_only " in c and "_0.1_warmup4000" in c]
    for shape in ("L-8_H-192_A-3", "L-4_H-192_A-3", "L-1_H-128_A-2", "L-2_H-128_A-1"):
        evals = [c for c in mask_only if f"pretraining/{shape}_mlm_nsp_0.8_0.1_0.1_" in c]
        kept = sorted(int(s) for c in evals for s in re.findall(r"kept/ckpt-(\d+) ", c))
        assert kept == [8000, 16000, 24000, 32000] and len(evals) == 5, shape
        assert all("1.0_0.0_0.0/heldout" in c for c in evals)


def test_long40k_fine_tunes_table_8s_ner_three_times_per_row_and_rate(tmp_path):
    # One run per cell could not tell 63.2 from 52.2 (issue 59): 80/10/10 at 1e-4 gave 52.2 too.
    commands = laptop_dry_run("long40k", tmp_path).splitlines()
    ner = [c for c in commands if "run_ner.py" in c and "_warmup4000/" in c]
    for masking in ("0.8_0.0_0.2", "0.8_0.2_0.0", "0.0_0.2_0.8", "0.0_0.0_1.0", "1.0_0.0_0.0"):
        runs = [c for c in ner if f"_{masking}_warmup4000/" in c]
        fine_tuned = [c for c in runs if "--feature_based" not in c]
        seeds = sorted(re.search(r"--seed=(\d+) ", c).group(1) for c in fine_tuned)
        assert seeds == ["0", "0", "1", "1", "2", "2"], masking  # two rates, three restarts
        assert len(runs) - len(fine_tuned) == 3, masking


def test_long40k_seeds_pretrains_the_readings_rows_with_seed_2_first_and_fine_tunes_each_as_its_row(
    tmp_path,
):
    # Issue 94: the spread of a cell holds the pre-training's own variance, not only fine-tuning's.
    commands = laptop_dry_run("long40k", tmp_path, tables="seeds").splitlines()
    pretraining = [c for c in commands if "run_pretraining.py" in c and "--do_train" in c]
    names = [re.search(r"--output_dir=\S*/pretraining/(\S+) ", c).group(1) for c in pretraining]
    recipe = "L-4_H-128_A-2_{}_warmup4000_seed2"
    assert names == [
        recipe.format("mlm_nsp_0.8_0.1_0.1"),  # Table 5's BERT, Table 8's 80/10/10
        recipe.format("mlm_0.8_0.1_0.1"),  # No NSP
        recipe.format("mlm_nsp_1.0_0.0_0.0"),  # Table 8's 100/0/0
        recipe.format("ltr_0.8_0.1_0.1"),  # LTR & No NSP, the longest, last
    ]
    assert all("--seed=2 " in c for c in pretraining)
    # The same records as the first seed's: the data steps' seeds do not change.
    train_data = [c for c in commands if "create_pretraining_data.py" in c and "train.tf" in c]
    assert len(train_data) == 2 and all("--random_seed=12345 " in c for c in train_data)
    # Every pre-training before any fine-tuning.
    first_fine_tuning = next(i for i, c in enumerate(commands) if "run_classifier.py" in c)
    assert first_fine_tuning > max(commands.index(c) for c in pretraining)
    # Each fine-tuned as its row at long40k: QNLI 3 restarts x 2 rates, +BiLSTM on LTR's
    # second seed, Table 8's NER columns 3 restarts for the two maskings only.
    qnli = [c for c in commands if "--task_name=QNLI " in c and "--bilstm" not in c]
    assert len(qnli) == 3 * 6
    assert any("--bilstm" in c and "ltr_0.8_0.1_0.1_warmup4000_seed2/" in c for c in commands)
    ner = [c for c in commands if "run_ner.py" in c]
    assert {re.search(r"pretraining/(\S+?)/", c).group(1) for c in ner} == {
        recipe.format("mlm_nsp_0.8_0.1_0.1"), recipe.format("mlm_nsp_1.0_0.0_0.0")
    }  # fmt: skip
    assert len(ner) == 2 * (2 * 3 + 3)  # fine-tuned at two rates and feature-based, 3 restarts


def test_a_seeded_run_is_named_by_its_seed_and_read_back_from_its_name():
    from reproduction.pretraining import Pretraining

    first = Pretraining("L-4_H-128_A-2", warmup_steps=4000)
    second = Pretraining("L-4_H-128_A-2", warmup_steps=4000, seed=2)
    assert (
        first.name == "L-4_H-128_A-2_mlm_nsp_0.8_0.1_0.1_warmup4000"
    )  # the first seed's: as before
    assert second.name == first.name + "_seed2"
    assert Pretraining.from_name(second.name) == (second, 0)
    assert Pretraining.from_name(f"{second.name}_step8000") == (second, 8000)


def test_long40k_fine_tunes_table_5s_qnli_three_times_per_row_and_rate(tmp_path):
    # Table 5's NSP reading rests on QNLI (issue 59): BERT against No NSP, each with its spread.
    commands = laptop_dry_run("long40k", tmp_path).splitlines()
    qnli = [c for c in commands if "run_classifier.py" in c and "--task_name=QNLI " in c]
    for run in ("mlm_nsp_0.8_0.1_0.1_warmup4000", "mlm_0.8_0.1_0.1_warmup4000", "random"):
        seeds = sorted(
            re.search(r"--seed=(\d+) ", c).group(1)
            for c in qnli
            if f"finetuning/L-4_H-128_A-2_{run}/" in c and "--bilstm" not in c
        )
        assert seeds == ["0", "0", "1", "1", "2", "2"], run  # two rates, three restarts
    # Figure 5's points stay one run each, and long's Table 5 keeps its one run per QNLI cell.
    kept = [c for c in qnli if "/kept/ckpt-8000 " in c]
    assert kept and all("--seed=0 " in c for c in kept)
    long = laptop_dry_run("long", tmp_path / "long").splitlines()
    assert all("--seed=0 " in c for c in long if "--task_name=QNLI " in c)


def test_long_chooses_each_fine_tuning_learning_rate_on_dev_for_every_row():
    runs = {1e-4: [{"Dev": 60.0}, {"Dev": 62.0}], 3e-4: [{"Dev": 65.0}, {"Dev": 61.0}]}
    chosen = _choose(runs, 2, "Dev")["Dev"]
    assert chosen == 63.0 and chosen.learning_rate == 3e-4
    assert chosen.spread == pytest.approx(2.828, abs=1e-3)  # standard deviation of 65 and 61
    # Every run at every rate stays with it, for the record of runs.
    assert chosen.runs == {1e-4: [60.0, 62.0], 3e-4: [65.0, 61.0]}
    runs[3e-4] = runs[3e-4][:1]  # until every rate's restarts have run, the cell is pending
    assert _choose(runs, 2, "Dev") is None
    runs[3e-4] = []
    assert _choose(runs, 2, "Dev") is None
    assert _choose({1e-4: [{"Dev": 60.0}]}, 1, "Dev")["Dev"].learning_rate is None  # one tried


def test_long_fine_tunes_every_model_at_both_rates_with_restarts(tmp_path: Path):
    commands = laptop_dry_run("long", tmp_path).splitlines()
    rte = [
        c for c in commands if "--task_name=RTE " in c and "L-4_H-128_A-2_mlm_nsp_0.8_0.1_0.1/" in c
    ]
    lrs = sorted(re.search(r"--learning_rate=(\S+)", c).group(1) for c in rte)
    assert lrs == ["0.0001"] * 3 + ["0.0003"] * 3
    ner = [c for c in commands if "run_ner.py" in c and "_random/" in c and "feature" not in c]
    # Table 7's no-pre-training row (shared with Table 8's): from random weights, at both rates
    assert len(ner) == 2
    feature = [c for c in commands if "--feature_based=" in c]
    assert {re.search(r"--learning_rate=(\S+)", c).group(1) for c in feature} == {"0.001"}


# --- The small scripts end to end, at --quick size ------------------------------------------


@pytest.fixture(scope="module")
def quick_dir(tmp_path_factory) -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared/data is absent")
    return tmp_path_factory.mktemp("paper_quick")


def run_small(script: str, out: Path) -> str:
    command = (f"scripts/paper/{script}", "small", str(out), "--quick")
    return succeeded(run_script(*command, timeout=3600, program="bash")).stdout


def table_rows(out: Path, name: str) -> list[dict]:
    with open(out / "tables" / f"{name}.tsv", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


@pytest.mark.slow
def test_table5_small_runs_every_row_and_column(quick_dir: Path):
    run_small("table5_ablation.sh", quick_dir)
    rows = table_rows(quick_dir, "table5")
    assert [r["row"] for r in rows[::5]] == [
        "BERT", "No NSP", "LTR & No NSP", "+ BiLSTM", "no pre-training"
    ]  # fmt: skip
    assert all(r["ours"] != "-" for r in rows)
    assert (quick_dir / "pretraining").is_dir()
    # Every run behind the table is in OUT/tables/runs.tsv, and the record gives its cells.
    record = read_runs(str(quick_dir / "tables" / "runs.tsv"))
    found = cells(record, "small", "table5")
    assert {(r["row"], r["column"]): r["ours"] for r in rows} == {
        where: figure(cell.mean) for where, cell in found.items()
    }


@pytest.mark.slow
def test_table6_small_reports_held_out_perplexity_per_shape(quick_dir: Path):
    run_small("table6_model_size.sh", quick_dir)
    rows = table_rows(quick_dir, "table6")
    ppl = [float(r["ours"]) for r in rows if r["column"] == "LM (ppl)"]
    assert len(ppl) == 2 and all(1 < p < 10_000 for p in ppl)


@pytest.mark.slow
def test_table8_small_pretrains_each_masking(quick_dir: Path):
    run_small("table8_masking.sh", quick_dir)
    rows = table_rows(quick_dir, "table8")
    assert [r["row"] for r in rows[::4]] == [
        "80/10/10",
        "100/0/0",
        "80/0/20",
        "80/20/0",
        "0/20/80",
        "0/0/100",
        "no pre-training",
    ]
    assert len(list((quick_dir / "data" / "records").iterdir())) == 6
    mask_only = [float(r["ours"]) for r in rows if r["column"] == "[MASK] ppl"]
    assert len(mask_only) == 7 and all(1 < p < 100_000 for p in mask_only)


@pytest.mark.slow
def test_figure5_small_fine_tunes_the_checkpoints_along_the_way(quick_dir: Path):
    run_small("figure5_steps.sh", quick_dir)
    rows = table_rows(quick_dir, "figure5")
    assert {r["row"] for r in rows} == {"MLM step 20", "MLM step 40", "LTR step 20", "LTR step 40"}
    assert {r["column"] for r in rows} == {"QNLI"}  # MNLI is not here: its stand-in


@pytest.mark.slow
def test_reproduce_all_small_writes_every_table_and_the_plots(quick_dir: Path):
    pytest.importorskip("matplotlib")
    run_small("reproduce_all.sh", quick_dir)
    for name in ("table1", "table2", "table3", "table4", "table7"):
        rows = table_rows(quick_dir, name)
        assert rows and any(r["ours"] != "-" for r in rows), name
    figures = sorted(os.listdir(quick_dir / "figures"))
    assert figures == [
        "figure5_steps.png", "mask_only_perplexity.png", "pretraining_curves.png",
        "table6_model_size.png",
    ]  # fmt: skip
    # The [MASK]-only curves: Figure 5's base run and each of Table 6's shapes (quick: two).
    curves, unigram = perplexity_curves(table_rows(quick_dir, "pretraining"))
    assert len(curves) == 3 and unigram is not None


@pytest.mark.slow
def test_reproduce_all_long_quick_writes_every_table_with_its_schedule(tmp_path: Path):
    if not SHARED.is_dir():
        pytest.skip("../shared/data is absent")
    command = ("scripts/paper/reproduce_all.sh", "long", str(tmp_path), "--quick")
    # About 210 steps: 60-70 minutes on 2 cores shared with other work (timed out at 3600 s).
    succeeded(run_script(*command, timeout=7200, program="bash"))
    for name in ("table1", "table2", "table3", "table4", "table5", "table6", "table7", "table8"):
        rows = table_rows(tmp_path, name)
        assert {r["schedule"] for r in rows} == {"long"}, name
        assert any(r["ours"] != "-" for r in rows), name
    table7 = {(r["row"], r["column"]): r for r in table_rows(tmp_path, "table7")}
    assert table7["Fine-tuning", "Dev F1"]["lr"] in ("0.0001", "0.0003")
    assert table7["no pre-training", "Test F1"]["ours"] != "-"
    table1 = [r for r in table_rows(tmp_path, "table1") if r["column"] != "Average"]
    assert {r["lr"] for r in table1} <= {"0.0001", "0.0003"}  # the chosen run's rate
    assert {r["row"] for r in table_rows(tmp_path, "figure5")} == {
        f"{model} step {step}" for model in ("MLM", "LTR") for step in (16, 32, 48, 64, 80)
    }
    with open(tmp_path / "tables" / "pretraining.tsv", encoding="utf-8") as f:
        runs = {r["run"]: r for r in csv.DictReader(f, delimiter="\t")}
    base = runs["L-4_H-32_A-2_mlm_nsp_0.8_0.1_0.1"]
    assert base["global_step"] == "80" and 80 * 8 * 20 < int(base["tokens"]) <= 80 * 8 * 128
    # Table 6's runs at long: half the steps, at their own rate (named so since 54ea8aa).
    assert runs["L-4_H-32_A-2_mlm_nsp_0.8_0.1_0.1_40steps_lr0.0005"]["global_step"] == "40"


def test_glue_search_table1_takes_each_tasks_best_run_and_averages(tmp_path: Path):
    import glue_search

    rows = [
        {"task": "MNLI-m", "metric": "eval_accuracy", "lr": "5e-5", "seed": 0, "value": 0.80},
        {"task": "MNLI-m", "metric": "eval_accuracy", "lr": "2e-5", "seed": 0, "value": 0.84},
        {"task": "MNLI-mm", "metric": "eval_mismatched_accuracy", "lr": "5e-5", "seed": 0,
         "value": 0.83},
        {"task": "MNLI-mm", "metric": "eval_mismatched_accuracy", "lr": "2e-5", "seed": 0,
         "value": 0.82},
    ]  # fmt: skip
    for row in rows:
        row.update(output_dir=str(tmp_path / row["lr"]), data_dir=str(tmp_path))  # no test.tsv

    class Args:
        output_dir, bert_dir, do_lower_case, max_seq_length = str(tmp_path), "", "true", 128

    table = glue_search.predict_test_sets(rows, Args, [])
    assert [(r["task"], r["lr"], r["submission"]) for r in table] == [
        ("MNLI-m", "2e-5", ""),
        ("MNLI-mm", "5e-5", ""),
    ]
    glue_search.write_table1(table, str(tmp_path / "table1.tsv"))
    lines = (tmp_path / "table1.tsv").read_text().splitlines()
    assert lines[1].split("\t")[:3] == ["MNLI-m", "eval_accuracy", "84.0"]
    assert lines[2].split("\t")[:3] == ["MNLI-mm", "eval_mismatched_accuracy", "83.0"]
    assert lines[3].split("\t")[:3] == ["Average", "", "83.5"]


def test_a_step_killed_midway_is_run_again_though_its_output_folder_exists(tmp_path: Path):
    from reproduction.runner import Runner

    runner = Runner(str(tmp_path), dry_run=False)
    phase2 = tmp_path / "records" / "phase2_seq512"  # made before its shards are written
    with pytest.raises(SystemExit):
        runner.run("data/train", ["bash", "-c", f"mkdir -p {phase2} && exit 1"], str(phase2))
    assert phase2.is_dir() and not runner.is_done("data/train", str(phase2))
    runner.run("data/train", ["touch", str(phase2 / "part-0")], str(phase2))
    assert runner.is_done("data/train", str(phase2))
    runner.run("data/train", ["false"], str(phase2))  # done: not run again


def test_the_runner_skips_done_steps_and_counts_the_pending_ones(tmp_path: Path, capsys):
    from reproduction.runner import Runner

    (tmp_path / "done.txt").write_text("")
    counter = Runner(str(tmp_path), dry_run=True, quiet=True)
    for name in ("data/a", "data/done", "pretraining/b"):
        done = tmp_path / ("done.txt" if name == "data/done" else f"{name[-1]}.txt")
        counter.run(name, ["true"], str(done))
    assert counter.printed == ["data/a", "pretraining/b"]

    runner = Runner(str(tmp_path), dry_run=False, pending=counter.printed)
    runner.run("data/a", ["touch", str(tmp_path / "a.txt")], str(tmp_path / "a.txt"))
    runner.run("data/a", ["false"], str(tmp_path / "a.txt"))  # done now: not run again
    assert (tmp_path / "a.txt").exists()
    assert "[0 min, step 1/2] data/a (log: " in capsys.readouterr().out
    with pytest.raises(SystemExit, match="step pretraining/b failed"):
        runner.run("pretraining/b", ["false"], str(tmp_path / "b.txt"))


def test_report_runs_nothing_and_writes_the_tables_with_their_pending_steps(tmp_path: Path):
    commands = dry_run("table6_model_size.sh", "base", tmp_path)
    steps = sum(line.startswith("# ") for line in commands.splitlines())
    env = {**SCRIPT_ENV, "CORPUS": "/data/c.txt", "HELDOUT": "/data/h.txt", "VOCAB": "/data/v"}
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "scripts/paper/reproduce.py", "--tables=table6", "--size=base"]
        + [f"--output_dir={out}", "--report"],
        cwd=REPO,
        env={**env, "GLUE_DIR": str(tmp_path / "glue")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["tables"]  # nothing ran
    table = (out / "tables" / "table6.tsv").read_text().splitlines()
    assert table[1].split("\t")[:4] == ["base", "3/768/12", "LM (ppl)", "-"]
    assert f"Pending: {steps} of this table's steps have not run yet" in result.stdout


def test_reproduce_takes_the_papers_tables_and_ours_by_name(tmp_path: Path):
    flags = ("--size=small", f"--output_dir={tmp_path}", "--dry_run")
    result = run_script("scripts/paper/reproduce.py", "--tables=table5,table9", *flags)
    line = error_line(result, "reproduce.py")
    assert line.endswith("--tables=table5,table9; unknown table9, expected some of table1, "
                         "table2, table3, table4, table5, table6, table7, table8, figure5, domain, "
                         "seeds or all")  # fmt: skip
    # `all` is the paper's tables; ours (domain, seeds) only by name.
    assert "# domain" not in succeeded(run_script("scripts/paper/reproduce.py", "--tables=all",
                                                  *flags)).stdout  # fmt: skip


def test_each_pretrainings_training_losses_are_kept_with_its_commit_and_command(tmp_path: Path):
    out = str(tmp_path)
    log = tmp_path / "logs" / "pretraining_run_seed2.log"
    log.parent.mkdir()
    line = "I1205 19:25:57.574 1 training.py:384] step {}/40000: loss={}, masked_lm_loss={}, " \
        "next_sentence_accuracy=0.5, steps_per_second=2.5, ETA 4:15:37"  # fmt: skip
    log.write_text(
        f"# bert_tf commit abc1234\n$ /venv/bin/python /checkout/run_pretraining.py "
        f"--output_dir={out}/pretraining/run_seed2 --seed=2\n"
        + "\n".join(line.format(step, 8 - step / 10000, 7 - step / 10000)
                    for step in (1000, 2000, 5000)) + "\n"
        # Resumed after step 5,000: its log goes on, the first reading of a step kept.
        + f"$ /venv/bin/python /checkout/run_pretraining.py --seed=2\n{line.format(5000, 1, 1)}\n"
    )  # fmt: skip
    (tmp_path / "pretraining" / "run_seed2").mkdir(parents=True)
    (tmp_path / "pretraining" / "no_log").mkdir()
    path = tmp_path / "tables" / "pretraining_losses.tsv"
    path.parent.mkdir()
    assert write_training(out, str(path), "long40k") == 2  # steps 1,000 and 5,000 of those kept
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert [(r["step"], r["loss"], r["masked_lm_loss"]) for r in rows] == [
        ("1000", "7.9", "6.9"), ("5000", "7.5", "6.5")
    ]  # fmt: skip
    assert rows[0]["commit"] == "abc1234" and rows[0]["lm_loss"] == "-"
    assert rows[0]["command"] == (
        "python run_pretraining.py --output_dir=OUT/pretraining/run_seed2 --seed=2"
    )


def test_pretraining_results_gather_every_finished_run_and_skip_unfinished_ones(tmp_path: Path):
    runs = tmp_path / "pretraining"
    files = {
        "mlm/eval_results.txt": "global_step = 40\nmasked_lm_perplexity = 380.5\n",
        "mlm/eval_mask_only/eval_results.txt": "masked_lm_perplexity = 650.25\n",
        "paper/phase2/eval_results.txt": "global_step = 100000\nmasked_lm_perplexity = 3.99\n",
        "random/eval_mask_only/eval_results.txt": "masked_lm_perplexity = 8143.7\n",
        "interrupted/train/events.out": "",
    }
    for name, text in files.items():
        (runs / name).parent.mkdir(parents=True, exist_ok=True)
        (runs / name).write_text(text)
    path = tmp_path / "tables" / "pretraining.tsv"
    tokens = {"mlm": 15_400_000, "paper": 131_000_000_000}.get
    assert write_results(str(tmp_path), str(path), "long", tokens) == 3
    with open(path, encoding="utf-8") as f:
        rows = {r["run"]: r for r in csv.DictReader(f, delimiter="\t")}
    assert sorted(rows) == ["mlm", "paper", "random"]
    assert {r["schedule"] for r in rows.values()} == {"long"}
    assert [rows[run]["tokens"] for run in sorted(rows)] == ["15400000", "131000000000", "-"]
    assert rows["mlm"]["masked_lm_perplexity"] == "380.5"
    assert rows["mlm"]["mask_only_masked_lm_perplexity"] == "650.25"
    assert rows["paper"]["global_step"] == "100000"
    assert rows["random"]["masked_lm_perplexity"] == "-"
    assert rows["random"]["mask_only_masked_lm_perplexity"] == "8143.7"


def test_a_runs_tokens_are_its_steps_times_batch_times_its_records_mean_length(tmp_path: Path):
    from reproduction.datasets import Data
    from reproduction.pretraining import Pretraining, tokens_seen
    from reproduction.runner import Runner
    from reproduction.scales import small_scale

    from bert_tf.io.tfrecord import encode_example, write_records

    scale, runner = small_scale(quick=True), Runner(str(tmp_path), dry_run=True, quiet=True)
    data = Data(scale, runner, str(tmp_path))
    run = Pretraining(scale.base_shape, steps=40)
    assert Pretraining.from_name(run.name) == (run, 0)
    assert Pretraining.from_name(f"{run.name}_step20") == (run, 20)  # a kept checkpoint
    assert Pretraining.from_name("L-4_H-32_A-2_random") is None
    own_rate = Pretraining(scale.base_shape, steps=40, learning_rate=5e-4)  # Tables 6, 8 at long
    assert own_rate.name.endswith("_40steps_lr0.0005")
    assert Pretraining.from_name(f"{own_rate.name}_step20") == (own_rate, 20)
    own_warmup = Pretraining(scale.base_shape, warmup_steps=8)  # Tables 6, 8 at long40k
    assert own_warmup.name.endswith("_0.8_0.1_0.1_warmup8")
    assert Pretraining.from_name(f"{own_warmup.name}_step20") == (own_warmup, 20)
    records = [encode_example({"input_mask": [1] * n + [0] * (128 - n)}, {}) for n in (100, 120)]
    write_records(data.records(run.masking)[0], records)
    assert tokens_seen(run.name, scale, data) is None  # not finished
    (tmp_path / "pretraining" / run.name).mkdir(parents=True)
    (tmp_path / "pretraining" / run.name / "eval_results.txt").write_text("global_step = 40\n")
    assert tokens_seen(run.name, scale, data) == 40 * scale.train_batch_size * 110
    assert tokens_seen(f"{run.name}_step20", scale, data) == 20 * scale.train_batch_size * 110


def test_the_unigram_baseline_predicts_each_masked_token_by_its_training_frequency():
    import numpy as np
    from unigram_baseline import unigram_results

    # add-one counts [1, 3, 2, 1] of 7: held-out 1 and 3 have p = 3/7 and 1/7
    results = unigram_results(np.array([1, 1, 2]), np.array([1, 3]), vocab_size=4)
    assert results["masked_lm_loss"] == pytest.approx(-(math.log(3 / 7) + math.log(1 / 7)) / 2)
    assert results["masked_lm_perplexity"] == pytest.approx(7 / math.sqrt(3))
    assert results["masked_lm_accuracy"] == 0.5  # always the most frequent token, 1


def test_the_bag_of_words_baseline_fits_the_regularised_logistic_optimum():
    import numpy as np
    from bow_baseline import SparseBinary, fit_logistic

    rng = np.random.default_rng(0)
    ones = rng.random((200, 30)) < 0.2  # [n, d] multi-hot
    y = (ones[:, :5].sum(1) > ones[:, 5:10].sum(1)).astype(float)
    rows, columns = np.nonzero(ones)
    w, b = fit_logistic(SparseBinary(rows, columns, ones.shape), y, l2=1e-2)
    # the optimum: the penalised loss's gradient is zero there
    residual = 1 / (1 + np.exp(-(ones @ w + b))) - y
    assert np.abs(ones.T @ residual / 200 + 1e-2 * w).max() < 1e-6
    assert abs(residual.mean()) < 1e-6


def test_the_bag_of_words_baseline_scores_a_task_its_words_decide(tmp_path):
    rows = [("a good film", "1"), ("bad , bad acting", "0"), ("good fun", "1"), ("so bad", "0")]
    write_tsv(tmp_path / "train.tsv", [("sentence", "label"), *rows * 5])
    write_tsv(tmp_path / "dev.tsv", [("sentence", "label"), ("good", "1"), ("bad film", "0")])
    output = tmp_path / "eval_results.txt"
    result = run_script(
        "scripts/paper/bow_baseline.py", "--task_name=SST-2", f"--data_dir={tmp_path}",
        "--max_train_examples=8", f"--output_file={output}",
    )  # fmt: skip
    assert succeeded(result)
    lines = output.read_text().splitlines()
    assert "eval_accuracy = 1.0" in lines and "train_examples = 8" in lines


def test_the_bag_of_words_baseline_refuses_a_task_of_three_labels(tmp_path):
    result = run_script(
        "scripts/paper/bow_baseline.py", "--task_name=MNLI", f"--data_dir={tmp_path}",
        f"--output_file={tmp_path / 'out.txt'}",
    )  # fmt: skip
    assert "--task_name=MNLI has labels" in error_line(result, "bow_baseline.py")


def test_the_reproduction_pages_show_plots_that_are_in_the_repository():
    # The record: docs/REPRODUCTION.md and its pages in docs/reproduction/, each image a path
    # from its own page.
    images = [
        (page.parent / image).resolve()
        for page in map(Path, record_pages())
        for image in re.findall(r"!\[[^]]*\]\(([^)]+)\)", page.read_text())
    ]
    assert len(images) >= 3
    for image in images:
        assert image.is_file(), image


TSV_HEADER = ["schedule", "row", "column", "ours", "paper_row", "paper", "spread", "lr"]
DOC = """# Tables

<!-- begin table5 -->
**Table 5: pre-training tasks** (ours / paper)

| | old |
|---|---|
| BERT | 1.0 / 2.0 |

- MNLI-m: RTE.
<!-- end table5 -->

Prose after the block stays.
"""


def test_the_doc_tables_give_the_paper_then_each_schedule_and_keep_the_notes(tmp_path):
    write_tsv(tmp_path / "table5.tsv", [
        TSV_HEADER,
        ["small", "BERT", "MNLI-m", "53.4", "BERT-BASE", "84.4", "-", "-"],
        ["small", "BERT", "QNLI", "59.7", "BERT-BASE", "88.4", "-", "-"],
        ["small", "No NSP", "MNLI-m", "55.7", "No NSP", "83.9", "-", "-"],
        ["long", "BERT", "MNLI-m", "55.5", "BERT-BASE", "84.4", "1.82", "0.0003"],
        ["long", "BERT", "QNLI", "74.7", "BERT-BASE", "88.4", "-", "0.0001"],
        ["long", "No NSP", "MNLI-m", "-", "No NSP", "83.9", "-", "-"],
    ])  # fmt: skip
    text, changed = render_doc(DOC, str(tmp_path), ["long", "small"])
    assert changed == ["table5"]
    # Without a record of runs, ours is the table's TSV's number as it is.
    assert text.split("<!-- begin table5 -->\n")[1].split("<!-- end")[0] == (
        "**Table 5: pre-training tasks** (the paper's, then ours: `long`, `small`)\n\n"
        "| | | paper | `long` | `small` |\n"
        "|---|---|---|---|---|\n"
        "| BERT (BERT-BASE) | MNLI-m | 84.4 | 55.5 | 53.4 |\n"
        "| BERT (BERT-BASE) | QNLI | 88.4 | 74.7 | 59.7 |\n"
        "| No NSP | MNLI-m | 83.9 | - | 55.7 |\n"
        "\n- MNLI-m: RTE.\n"
    )
    assert text.startswith("# Tables\n") and text.endswith("Prose after the block stays.\n")
    assert render_doc(text, str(tmp_path), ["long", "small"]) == (text, [])
    # With one, every cell it has is its runs': mean, spread and how many.
    write_tsv(tmp_path / "runs.tsv", [
        ["schedule", "table", "row", "column", "seed", "lr", "restart", "value", "runs", "spread",
         "source"],
        ["long", "table5", "BERT", "MNLI-m", "1", "0.0003", "-", "55.5", "3", "1.82", "aggregate"],
        ["long", "table5", "BERT", "MNLI-m", "2", "0.0003", "0", "50.0", "1", "-", "run"],
    ])  # fmt: skip
    text, _ = render_doc(text, str(tmp_path), ["long", "small"])
    assert "| BERT (BERT-BASE) | MNLI-m | 84.4 | 54.1 ±3.13 (4) | 53.4 |\n" in text


def test_verifying_the_doc_tables_names_the_block_that_differs_from_its_tsv(tmp_path):
    write_tsv(tmp_path / "table5.tsv", [
        TSV_HEADER, ["small", "BERT", "QNLI", "59.7", "BERT-BASE", "88.4", "-", "-"],
    ])  # fmt: skip
    doc = tmp_path / "doc.md"
    doc.write_text(DOC)
    options = DocTablesOptions(doc=str(doc), tsv_dir=str(tmp_path), verify=True)
    with pytest.raises(SystemExit, match="the blocks table5 differ from their TSVs"):
        doc_tables(options)
    assert doc.read_text() == DOC
    doc_tables(dataclasses.replace(options, verify=False))
    doc_tables(options)  # now in step: no exit
    # Only the schedules the TSV has rows of (long40k's: the ablations' alone).
    assert "(the paper's, then ours: `small`)\n" in doc.read_text()
    assert "| BERT (BERT-BASE) | QNLI | 88.4 | 59.7 |" in doc.read_text()


def test_a_doc_table_without_its_tsv_is_refused_naming_the_file(tmp_path):
    with pytest.raises(InputError, match=r"block table5: .*table5.tsv does not exist"):
        render_doc(DOC, str(tmp_path), ["long", "small"])


def test_every_table_of_the_reproduction_page_is_its_tsvs():
    doc_tables(DocTablesOptions(verify=True))  # the page and TSVs of the repo, every schedule


def test_the_reproduction_pages_links_to_their_own_and_each_others_sections_resolve():
    # GitHub's anchors: the heading lower-cased, without punctuation, spaces as hyphens.
    def anchors(page: Path) -> set[str]:
        prose = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)  # not `# comment`
        headings = re.findall(r"^#+ (.+)$", prose, re.M)
        return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}

    pages = [Path(page) for page in record_pages()]
    # [text](page.md), [text](page.md#anchor), [text](#anchor): (the page linked, the anchor).
    link = re.compile(r"\]\(([\w./-]*\.md|)(?:#([^)]+))?\)")
    links = [
        (page, (page.parent / path if path else page, anchor))
        for page in pages
        for path, anchor in link.findall(page.read_text())
    ]
    broken = [
        f"{page.name}: {into}#{anchor}"
        for page, (into, anchor) in links
        if not into.is_file() or anchor and anchor not in anchors(into)
    ]
    # Each table's page is linked from docs/REPRODUCTION.md; the pages link to each other.
    assert {page.resolve() for page in pages[1:]} <= {
        into.resolve() for page, (into, _) in links if page == pages[0]
    }
    assert any(anchor for page, (_, anchor) in links if page != pages[0])
    assert broken == []


def test_the_pretraining_curves_group_each_tables_runs_at_either_schedule():
    small = [
        "L-4_H-128_A-2_mlm_nsp_0.8_0.1_0.1", "L-4_H-128_A-2_mlm_0.8_0.1_0.1",
        "L-4_H-128_A-2_ltr_0.8_0.1_0.1", "L-1_H-128_A-2_mlm_nsp_0.8_0.1_0.1",
        "L-4_H-128_A-2_mlm_nsp_1.0_0.0_0.0", "L-4_H-128_A-2_random",
    ]  # fmt: skip
    assert pretraining_groups(small, "small") == {
        "objective (Table 5)": small[:3],
        "masking (Table 8)": [small[0], small[4]],
        "size (Table 6)": [small[0], small[3]],
    }
    # long: Tables 6 and 8 at 20,000 steps and their own rate, their own runs, not the
    # 40,000-step base run nor their runs at the base run's rate.
    long = [
        "L-4_H-128_A-2_mlm_nsp_0.8_0.1_0.1", "L-4_H-128_A-2_ltr_0.8_0.1_0.1",
        "L-4_H-128_A-2_mlm_nsp_0.8_0.1_0.1_step8000",
        "L-4_H-128_A-2_mlm_nsp_0.8_0.1_0.1_20000steps_lr0.0005",
        "L-1_H-128_A-2_mlm_nsp_0.8_0.1_0.1_20000steps_lr0.0005",
        "L-4_H-128_A-2_mlm_nsp_0.0_0.0_1.0_20000steps_lr0.0005",
        "L-1_H-128_A-2_mlm_nsp_0.8_0.1_0.1_20000steps",
    ]  # fmt: skip
    assert pretraining_groups(long, "long") == {
        "objective (Table 5)": long[:2],
        "masking (Table 8)": [long[3], long[5]],
        "size (Table 6)": [long[3], long[4]],
    }
    # long40k: Tables 6 and 8 at the base run's steps and rate with their own warm-up, and
    # Table 5's objectives at that recipe too (BERT's row is Table 6's run of the shape), not
    # `long`'s runs beside them in the same output folder.
    warmup = [name.replace("_20000steps_lr0.0005", "_warmup4000") for name in long] + [
        "L-4_H-128_A-2_mlm_0.8_0.1_0.1_warmup4000", "L-4_H-128_A-2_ltr_0.8_0.1_0.1_warmup4000",
    ]  # fmt: skip
    assert pretraining_groups(warmup, "long40k") == {
        "objective (Table 5)": [warmup[3], warmup[7], warmup[8]],
        "masking (Table 8)": [warmup[3], warmup[5]],
        "size (Table 6)": [warmup[3], warmup[4]],
    }
    # --quick: smaller shapes and steps, the same grouping.
    quick = [name.replace("H-128", "H-32").replace("20000steps", "40steps") for name in long]
    assert pretraining_groups(quick, "long")["size (Table 6)"] == [quick[3], quick[4]]
    assert pretraining_groups(quick, "long")["objective (Table 5)"] == quick[:2]
