"""scripts/paper/domain_adaptation.sh (issue 49): the base model carried on over Wikipedia for a
tenth of its steps, with and without the domain's words in its vocab, beside the model as it is
and the same steps from random weights; the task's Dev articles never in the corpus."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO, run_script

sys.path.insert(0, str(REPO / "scripts" / "paper"))

from reproduction.domain import paragraphs  # noqa: E402


def dry_run(tmp_path, size: str = "long") -> subprocess.CompletedProcess:
    for folder in ("books", "glue", "squad", "conll"):
        (tmp_path / "data" / folder).mkdir(parents=True)
    (tmp_path / "data" / "books" / "001.txt").write_text("A book.\n")
    env = {
        f"{n.upper()}_DIR": str(tmp_path / "data" / n) for n in ("books", "glue", "squad", "conll")
    }
    return run_script(
        "scripts/paper/domain_adaptation.sh", size, str(tmp_path / "out"), "--dry_run",
        program="bash", env=env,
    )  # fmt: skip


def test_the_experiment_continues_the_base_model_a_tenth_of_its_steps_three_ways(tmp_path):
    result = dry_run(tmp_path)
    assert result.returncode == 0, result.stderr
    commands = result.stdout.splitlines()
    data = tmp_path / "out" / "data"
    training = [c for c in commands if "run_pretraining.py" in c and "--do_train" in c]
    continued = [c for c in training if "_domain" in c.split("--output_dir=")[1].split()[0]]
    assert len(continued) == 3
    for flag in ("--num_train_steps=4000 ", "--num_warmup_steps=400 ", "--learning_rate=0.0002 "):
        assert all(flag in c for c in continued), flag
    base = tmp_path / "out" / "pretraining" / "L-4_H-128_A-2_mlm_nsp_0.8_0.1_0.1" / "pretrained"
    starts = sorted(c.split("--init_checkpoint=")[1].split()[0] for c in continued)
    random = tmp_path / "out" / "pretraining" / "L-4_H-128_A-2_random" / "bert_model.ckpt"
    assert starts == [str(base / "bert_model.ckpt")] * 2 + [str(random)]
    # The domain's words: in the vocab of one run, its records and its fine-tuning.
    vocab = data / "domain" / "vocab.txt"
    assert any("scripts/extend_vocab.py" in c and f"--output_file={vocab}" in c for c in commands)
    with_words = [c for c in commands if f"--vocab_file={vocab} " in c]
    assert sum("create_pretraining_data.py" in c for c in with_words) == 2  # train, held-out
    assert sum("run_classifier.py" in c and "--task_name=QNLI" in c for c in with_words) == 2
    # The corpus is the training articles' text; the Dev articles' only measure perplexity.
    corpus = [c for c in commands if "prepare_corpus.py" in c and "/domain/" in c]
    assert [c.split("--output_file=")[1] for c in corpus] == [  # from the split's two files
        str(data / "domain" / "train.txt"), str(data / "domain" / "heldout.txt"),
    ]  # fmt: skip
    records = [c for c in commands if "create_pretraining_data.py" in c and "/domain/" in c]
    assert all(
        ("--input_file=" + str(data / "domain" / "train.txt")) in c
        for c in records if "/train.tfrecord" in c
    )  # fmt: skip


def test_only_the_laptop_sizes_run_it(tmp_path):
    result = dry_run(tmp_path, "base")
    assert result.returncode == 1
    assert "--tables=domain runs at --size=small or long or long40k" in result.stderr


def test_squad_articles_become_paragraphs_a_line_and_articles_documents(tmp_path):
    squad = {"data": [
        {"paragraphs": [{"context": "One  para.\nStill one."}, {"context": "Two."}]},
        {"paragraphs": [{"context": "Three."}]},
    ]}  # fmt: skip
    path = tmp_path / "train.json"
    path.write_text(json.dumps(squad))
    assert paragraphs(str(path)) == "One para. Still one.\nTwo.\n\nThree.\n"


def test_at_long40k_the_base_is_table_6s_run_of_the_base_shape(tmp_path):
    # The same shape, steps and rate as long's base model, trained anyway for Table 6.
    result = dry_run(tmp_path, "long40k")
    assert result.returncode == 0, result.stderr
    continued = [c for c in result.stdout.splitlines() if "_warmup4000_domain_4000steps " in c]
    assert continued and all("_warmup4000/pretrained/bert_model.ckpt " in c for c in continued)


def test_the_measured_rows_are_one_per_model_and_each_number_is_in_the_reproduction_page():
    tsv = (REPO / "docs" / "reproduction" / "domain_adaptation.tsv").read_text().splitlines()
    assert tsv[0].split("\t") == ["model", "steps", "domain_ppl", "task", "dev"]
    rows = [line.split("\t") for line in tsv[1:]]
    assert [r[0] for r in rows] == [
        "base model (books)",
        "adapted",
        "adapted, domain vocab",
        "random weights, same steps",
    ]
    page = (REPO / "docs" / "reproduction" / "domain_adaptation.md").read_text()
    section = page.split("# Continued pre-training on a domain")[1]
    for model, _, ppl, _, dev in rows:
        assert f"| {model} |" in section and ppl in section and dev in section, model
