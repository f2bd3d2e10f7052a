"""The paper's tables, one command each: pre-trains the models a table compares, fine-tunes them
on its tasks and writes our numbers beside the paper's (OUT/tables/<table>.tsv and .md).

    python scripts/paper/reproduce.py --tables=table5 --size=small --output_dir=output/paper_small
    python scripts/paper/reproduce.py --tables=all --size=base --output_dir=/big/disk --dry_run

Sizes:
- small: a laptop CPU, hours for every table (docs/REPRODUCTION.md has what it gave). Our
  stand-in for BooksCorpus is ../shared/data/books (BOOKS_DIR), prepared with prepare_corpus.py
  into a cased corpus with 4 books held out; a cased 8k WordPiece vocab learned from it;
  phase-1 records only (128 tokens, 20 predictions, dupe_factor 5); models a sixth of BERT's
  width and a third of its depth (the paper's 12/768/12 is our 4/128/2), 4,000 steps of 32
  sequences. Fine-tuning on the real GLUE, SQuAD and CoNLL-2003 files in ../shared/data, with
  stand-ins (scripts/paper/standin_data.py) where a data set is not here.
- base, large: the paper's settings: BERT-BASE / BERT-LARGE shapes (Table 6: its six shapes),
  two-phase pre-training by scripts/paper/pretrain_bert.sh (PLATFORM=tpu|gpu and its other
  variables pass through) on CORPUS (one sentence per line, e.g. prepare_corpus.py's output of
  BooksCorpus and Wikipedia) with HELDOUT (held-out text of the same kind) and VOCAB; data in
  GLUE_DIR, SQUAD_DIR (train and dev files), CONLL_DIR, SWAG_DIR.

`--quick` shrinks `small` to minutes (3 books, 40 steps, 64 examples per task): the numbers
only show that every step runs. Every step is skipped when its output exists, so rerunning the
command resumes; `--dry_run` prints the commands instead of running them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time

from paper_results import PAPER
from standin_data import glue_subset, qnli_from_squad, split_squad, swag_from_books

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED_DATA = os.path.join(REPO, "..", "shared", "data")
TABLES = ("table1", "table2", "table3", "table4", "table5", "table6", "table7", "table8")
FIGURES = ("figure5",)
DEFAULT_MASKING = "0.8,0.1,0.1"
# The paper's phase 1 (128 tokens) is 90% of its 1,000,000 steps.
PHASE1_STEPS = 900_000
# Table 8's rows: MASK, SAME, RND rates.
TABLE8_MASKINGS = (
    "0.8,0.1,0.1",
    "1.0,0.0,0.0",
    "0.8,0.0,0.2",
    "0.8,0.2,0.0",
    "0.0,0.2,0.8",
    "0.0,0.0,1.0",
)
# The feature Table 8's feature-based column uses (Appendix C.2: "we concatenate the last 4
# layers of BERT as the features, which was shown to be the best approach in Section 5.3").
TABLE8_FEATURE = "concat_last_four_hidden"
NER_FEATURES = (
    "embeddings",
    "second_to_last_hidden",
    "last_hidden",
    "weighted_sum_last_four_hidden",
    "concat_last_four_hidden",
    "weighted_sum_all_layers",
)


@dataclasses.dataclass
class Scale:
    """Everything a size decides: shapes, pre-training and fine-tuning settings, data."""

    name: str
    base_shape: str
    table6_shapes: tuple[str, ...]
    pretraining_steps: int
    warmup_steps: int
    train_batch_size: int
    learning_rate: float
    keep_checkpoint_every_n_steps: int
    # Fine-tuning: per task kind (glue, squad1, squad2, ner, ner_feature, swag): lr, epochs,
    # batch, max_seq_length; caps on training examples (0: all) and restarts per task.
    finetuning: dict
    max_train_examples: dict
    max_eval_examples: int
    restarts: dict
    table6_restarts: int
    # small only: where the corpus comes from and how it is prepared.
    books: int = 0  # 0: all
    vocab_size: int = 8192
    dupe_factor: int = 5
    heldout_documents: int = 4

    @property
    def laptop(self) -> bool:
        return self.name == "small"


def small_scale(quick: bool) -> Scale:
    glue = {"learning_rate": 1e-4, "epochs": 3.0, "batch": 32, "max_seq_length": 128}
    scale = Scale(
        name="small",
        base_shape="L-4_H-128_A-2",
        table6_shapes=(
            "L-1_H-128_A-2",
            "L-2_H-128_A-1",
            "L-2_H-128_A-2",
            "L-4_H-128_A-2",
            "L-4_H-192_A-3",
            "L-8_H-192_A-3",
        ),
        pretraining_steps=4000,
        warmup_steps=400,
        train_batch_size=32,
        learning_rate=1e-3,
        keep_checkpoint_every_n_steps=800,
        finetuning={
            "glue": glue,
            "squad1": {**glue, "epochs": 3.0},
            "squad2": {**glue, "epochs": 2.0},
            "ner": glue,
            "ner_feature": {**glue, "learning_rate": 1e-3},
            "swag": {**glue, "batch": 16},
        },
        max_train_examples={"SST-2": 8000, "QNLI": 8000, "swag": 4000},
        max_eval_examples=0,
        restarts={"RTE": 3, "MRPC": 3},
        table6_restarts=0,  # 0: as `restarts`
    )
    if quick:
        scale = dataclasses.replace(
            scale,
            base_shape="L-4_H-32_A-2",
            table6_shapes=("L-1_H-32_A-2", "L-4_H-32_A-2"),
            pretraining_steps=40,
            warmup_steps=4,
            train_batch_size=8,
            keep_checkpoint_every_n_steps=20,
            finetuning={
                kind: {**settings, "epochs": 1.0, "batch": 8, "max_seq_length": 64}
                for kind, settings in scale.finetuning.items()
            },
            max_train_examples={"all": 64},
            max_eval_examples=32,
            restarts={},
            books=3,
            vocab_size=2000,
            dupe_factor=1,
            heldout_documents=1,
        )
    return scale


def paper_scale(size: str) -> Scale:
    shape = "base" if size == "base" else "large"
    glue = {"learning_rate": 2e-5, "epochs": 3.0, "batch": 32, "max_seq_length": 128}
    return Scale(
        name=size,
        base_shape=shape,
        table6_shapes=(
            "L-3_H-768_A-12",
            "L-6_H-768_A-3",
            "L-6_H-768_A-12",
            "L-12_H-768_A-12",
            "L-12_H-1024_A-16",
            "L-24_H-1024_A-16",
        ),
        pretraining_steps=1_000_000,
        warmup_steps=10_000,
        train_batch_size=256,
        learning_rate=1e-4,
        keep_checkpoint_every_n_steps=200_000,
        finetuning={
            "glue": glue,
            # Paper Sec. 4.2/4.3: SQuAD 1.1 lr 5e-5, batch 32, 3 epochs; 2.0: batch 48, 2.
            "squad1": {"learning_rate": 5e-5, "epochs": 3.0, "batch": 32, "max_seq_length": 384},
            "squad2": {"learning_rate": 5e-5, "epochs": 2.0, "batch": 48, "max_seq_length": 384},
            "ner": {**glue, "learning_rate": 5e-5},
            "ner_feature": {**glue, "learning_rate": 1e-3},
            # Sec. 4.4: SWAG lr 2e-5, batch 16, 3 epochs.
            "swag": {**glue, "batch": 16},
        },
        max_train_examples={},
        max_eval_examples=0,
        restarts={},
        table6_restarts=5,  # Table 6: "the average Dev set accuracy from 5 random restarts"
    )


# --- Running steps -------------------------------------------------------------------------


class Runner:
    """Runs each step's command unless its output exists; logs go to OUT/logs/."""

    def __init__(self, output_dir: str, dry_run: bool, env: dict | None = None) -> None:
        self.output_dir, self.dry_run = output_dir, dry_run
        self.env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})}
        self.started = time.monotonic()
        self.steps = 0
        self.printed: set[str] = set()

    def run(self, name: str, command: list[str], done: str, env: dict | None = None) -> None:
        """Runs `command` (from the repository root) unless `done` exists."""
        if os.path.exists(done):
            return
        self.steps += 1
        log = os.path.join(self.output_dir, "logs", name.replace("/", "_") + ".log")
        line = " ".join(shlex.quote(part) for part in command)
        if self.dry_run:
            if name in self.printed:
                return
            self.printed.add(name)
            prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
            print(f"# {name}\n{prefix + ' ' if prefix else ''}{line}")
            return
        os.makedirs(os.path.dirname(log), exist_ok=True)
        elapsed = time.monotonic() - self.started
        print(f"[{elapsed / 60:6.1f} min] {name} (log: {log})", flush=True)
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"$ {line}\n")
            f.flush()
            result = subprocess.run(
                command, cwd=REPO, env={**self.env, **(env or {})}, stdout=f, stderr=f
            )
        if result.returncode != 0:
            with open(log, encoding="utf-8") as f:
                tail = f.read().strip().splitlines()[-1:]
            sys.exit(f"reproduce.py: error: step {name} failed: {' '.join(tail)} (see {log})")

    def python(self, name: str, script: str, flags: dict, done: str, *extra: str) -> None:
        command = [sys.executable, os.path.join(REPO, script)]
        command += [f"--{key}={value}" for key, value in flags.items() if value is not None]
        self.run(name, command + list(extra), done)


def read_results(path: str) -> dict[str, float]:
    """eval_results.txt (`key = value`) or eval_results.json."""
    with open(path, encoding="utf-8") as f:
        if path.endswith(".json"):
            return {k: float(v) for k, v in json.load(f).items()}
        return {k: float(v) for k, v in (line.strip().split(" = ") for line in f if " = " in line)}


# --- Data ------------------------------------------------------------------------------------


class Data:
    """Where each data set is, building the stand-ins and the small-scale corpus on demand."""

    def __init__(self, scale: Scale, runner: Runner, output_dir: str) -> None:
        self.scale, self.runner = scale, runner
        self.dir = os.path.join(output_dir, "data")
        self.glue_dir = os.environ.get("GLUE_DIR", os.path.join(SHARED_DATA, "glue"))
        self.squad_dir = os.environ.get("SQUAD_DIR", os.path.join(SHARED_DATA, "squad"))
        self.conll_dir = os.environ.get("CONLL_DIR", os.path.join(SHARED_DATA, "conll2003"))
        self.swag_dir = os.environ.get("SWAG_DIR", "")
        self.books_dir = os.environ.get("BOOKS_DIR", os.path.join(SHARED_DATA, "books"))

    # The pre-training corpus and records.

    @property
    def vocab(self) -> str:
        return os.environ["VOCAB"] if not self.scale.laptop else os.path.join(self.dir, "vocab.txt")

    def corpus(self) -> tuple[str, str]:
        """(training corpus, held-out corpus) files or globs."""
        if not self.scale.laptop:
            return _required_env("CORPUS"), _required_env("HELDOUT")
        train = os.path.join(self.dir, "corpus", "books_train.txt")
        heldout = os.path.join(self.dir, "corpus", "books_heldout.txt")
        books = sorted(
            os.path.join(self.books_dir, name)
            for name in os.listdir(self.books_dir)
            if name.endswith((".txt", ".txt.gz"))
        )
        flags = {
            "input_file": ",".join(books[: self.scale.books or None]),
            "output_file": train,
            "heldout_file": heldout,
            "num_heldout_documents": self.scale.heldout_documents,
        }
        self.runner.python("data/corpus", "prepare_corpus.py", flags, heldout)
        self.runner.python(
            "data/vocab",
            "create_vocab.py",
            {
                "input_file": train,
                "output_file": self.vocab,
                "vocab_size": self.scale.vocab_size,
                "do_lower_case": False,
                "min_count": 10 if self.scale.books == 0 else 2,
            },
            self.vocab,
        )
        return train, heldout

    def records(self, masking: str) -> tuple[str, str]:
        """Records of the corpus masked at `masking` rates: (training, held-out). Small: one
        file each (phase 1 only); paper sizes: folders of both phases' shards, as
        scripts/create_pretraining_data_two_phases.sh writes them."""
        train, heldout = self.corpus()
        folder = os.path.join(self.dir, "records", masking.replace(",", "_"))
        outputs = {}
        for split, corpus, seed, dupe in (
            ("train", train, 12345, self.scale.dupe_factor),
            ("heldout", heldout, 54321, 1),
        ):
            if not self.scale.laptop:
                outputs[split] = os.path.join(folder, split)
                self.runner.run(
                    f"data/{split}_{masking}",
                    [
                        "bash",
                        os.path.join(REPO, "scripts", "create_pretraining_data_two_phases.sh"),
                        corpus,
                        outputs[split],
                        self.vocab,
                        str(dupe),
                    ],
                    os.path.join(outputs[split], "phase2_seq512"),
                    env={
                        "EXTRA_FLAGS": f"--masking_rates={masking} --random_seed={seed} "
                        f"--do_lower_case={os.environ.get('DO_LOWER_CASE', 'true')}"
                    },
                )
                continue
            outputs[split] = os.path.join(folder, f"{split}.tfrecord")
            flags = {
                "input_file": corpus,
                "output_file": outputs[split],
                "vocab_file": self.vocab,
                "do_lower_case": False,
                "max_seq_length": 128,
                "max_predictions_per_seq": 20,
                "random_seed": seed,
                "dupe_factor": dupe,
                "masking_rates": masking,
            }
            os.makedirs(folder, exist_ok=True)
            self.runner.python(
                f"data/{split}_{masking}", "create_pretraining_data.py", flags, outputs[split]
            )
        return outputs["train"], outputs["heldout"]

    # Fine-tuning data.

    def glue(self, task: str) -> tuple[str, str, str] | None:
        """(data_dir, the processor's task name, what stands in for it) for a Table column
        (MNLI-m, QNLI, MRPC, ...); None when neither it nor a stand-in is here."""
        name = {"MNLI-m": "MNLI", "MNLI-mm": "MNLI"}.get(task, task)
        source = os.path.join(self.glue_dir, name)
        if os.path.isdir(source):
            return self._capped_glue(name, source), name, ""
        if name == "MNLI" and os.path.isdir(os.path.join(self.glue_dir, "RTE")):
            rte = self._capped_glue("RTE", os.path.join(self.glue_dir, "RTE"))
            return rte, "RTE", "RTE (the only NLI set here)"
        if name == "QNLI":
            return self._qnli_from_squad(), "QNLI", "QNLI built from SQuAD 1.1 Dev"
        return None

    def _cap(self, task: str) -> int:
        caps = self.scale.max_train_examples
        return caps.get("all", caps.get(task, 0))

    def _capped_glue(self, task: str, source: str) -> str:
        cap, eval_cap = self._cap(task), self.scale.max_eval_examples
        if not (cap or eval_cap):
            return source
        target = os.path.join(self.dir, "glue", task)
        if not os.path.isdir(target) and not self.runner.dry_run:
            glue_subset(task, source, target, cap or 10**9)
            if eval_cap:
                _cap_lines(os.path.join(target, "dev.tsv"), eval_cap + 1)
        return target

    def squad(self, version: str) -> tuple[str, str, str]:
        """(train file, eval file, what stands in) for SQuAD `version` ("1.1" or "2.0")."""
        train = os.path.join(self.squad_dir, f"train-v{version}.json")
        dev = os.path.join(self.squad_dir, f"dev-v{version}.json")
        if os.path.isfile(train) and os.path.isfile(dev):
            return train, dev, ""
        if not os.path.isfile(dev):
            dev = os.path.join(self.squad_dir, "dev-v2.0-half.json")
        folder = os.path.join(self.dir, "squad")
        ours = (
            os.path.join(folder, f"train-v{version}.json"),
            os.path.join(folder, f"dev-v{version}.json"),
        )
        if not os.path.isfile(ours[1]) and not self.runner.dry_run:
            # SQuAD 2.0's half Dev has 16 articles: one in four held out; 1.1's 48: one in five.
            split_squad(dev, *ours, eval_every=4 if version == "2.0" else 5)
            if self.scale.max_eval_examples:
                for path, cap in zip(
                    ours, (self._cap("squad"), self.scale.max_eval_examples), strict=True
                ):
                    _cap_squad(path, cap)
        what = f"{os.path.basename(dev)} split by article (4/5 train, 1/5 eval)"
        if version == "2.0":
            what = f"{os.path.basename(dev)} split by article (3/4 train, 1/4 eval)"
        return *ours, what

    def _qnli_from_squad(self) -> str:
        train, dev, _ = self.squad("1.1")
        folder = os.path.join(self.dir, "glue", "QNLI")
        if not os.path.isfile(os.path.join(folder, "dev.tsv")) and not self.runner.dry_run:
            qnli_from_squad(train, os.path.join(folder, "train.tsv"))
            qnli_from_squad(dev, os.path.join(folder, "dev.tsv"))
            cap = self._cap("QNLI")
            if cap:
                _cap_lines(os.path.join(folder, "train.tsv"), cap + 1)
        return folder

    def conll(self) -> str:
        cap, eval_cap = self._cap("ner"), self.scale.max_eval_examples
        if not (cap or eval_cap):
            return self.conll_dir
        folder = os.path.join(self.dir, "conll2003")
        for split, count in (("train", cap), ("valid", eval_cap), ("test", eval_cap)):
            self.runner.python(
                f"data/conll_{split}",
                "scripts/conll_sample.py",
                {
                    "input_file": os.path.join(self.conll_dir, f"{split}.txt"),
                    "output_file": os.path.join(folder, f"{split}.txt"),
                    "count": count or 10**9,
                },
                os.path.join(folder, f"{split}.txt"),
            )
        return folder

    def swag(self) -> tuple[str, str]:
        """(data_dir, what stands in)."""
        if self.swag_dir and os.path.isfile(os.path.join(self.swag_dir, "val.csv")):
            return self.swag_dir, ""
        _, heldout = self.corpus()
        folder = os.path.join(self.dir, "swag_books")
        if not os.path.isfile(os.path.join(folder, "val.csv")) and not self.runner.dry_run:
            swag_from_books(heldout, folder)
            cap, eval_cap = self._cap("swag"), self.scale.max_eval_examples
            if cap:
                _cap_lines(os.path.join(folder, "train.csv"), cap + 1)
            if eval_cap:
                _cap_lines(os.path.join(folder, "val.csv"), eval_cap + 1)
        return folder, "SWAG's format from the held-out books (next-sentence endings)"


def _required_env(name: str) -> str:
    if not os.environ.get(name):
        sys.exit(f"reproduce.py: error: set {name} (see the docstring) for this size")
    return os.environ[name]


def _cap_lines(path: str, count: int) -> None:
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines[:count])


def _cap_squad(path: str, count: int) -> None:
    if not count:
        return
    with open(path, encoding="utf-8") as f:
        dataset = json.load(f)
    kept, articles = 0, []
    for article in dataset["data"]:
        paragraphs = []
        for paragraph in article["paragraphs"]:
            if kept < count:
                qas = paragraph["qas"][: count - kept]
                kept += len(qas)
                paragraphs.append({**paragraph, "qas": qas})
        if paragraphs:
            articles.append({**article, "paragraphs": paragraphs})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({**dataset, "data": articles}, f)


# --- Models ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Model:
    """A pre-trained model to fine-tune: its files, and a name for its results."""

    name: str
    bert_config: str
    vocab: str
    init_checkpoint: str


@dataclasses.dataclass(frozen=True)
class Pretraining:
    """One pre-training run: a shape, an objective (Table 5) and masking rates (Table 8)."""

    shape: str
    objective: str = "mlm_nsp"
    masking: str = DEFAULT_MASKING

    @property
    def name(self) -> str:
        return f"{self.shape}_{self.objective}_{self.masking.replace(',', '_')}"


def pretrain(run: Pretraining, scale: Scale, data: Data, runner: Runner) -> str:
    """Pre-trains `run` unless it is done; returns its output directory."""
    out = os.path.join(runner.output_dir, "pretraining", run.name)
    config = os.path.join(out, "shape.json")
    train, heldout = data.records(run.masking)
    runner.python(
        f"pretraining/{run.name}/config",
        "scripts/make_bert_config.py",
        {"size": run.shape, "vocab_file": data.vocab, "output_file": config},
        config,
    )
    flags = {
        "bert_config_file": config,
        "input_file": train,
        "eval_input_file": heldout,
        "output_dir": out,
        "vocab_file": data.vocab,
        "objective": run.objective,
        "keep_checkpoint_every_n_steps": scale.keep_checkpoint_every_n_steps,
    }
    if scale.laptop:
        flags.update(
            do_train=True,
            do_eval=True,
            train_batch_size=scale.train_batch_size,
            eval_batch_size=32,
            max_eval_steps=1000,
            learning_rate=scale.learning_rate,
            num_train_steps=scale.pretraining_steps,
            num_warmup_steps=scale.warmup_steps,
            save_checkpoints_steps=scale.keep_checkpoint_every_n_steps,
            log_steps=max(scale.pretraining_steps // 40, 1),
            use_xla=True,
            seed=1,
        )
        runner.python(f"pretraining/{run.name}", "run_pretraining.py", flags, _pretrained_done(out))
        return out
    # The paper's recipe, two phases (scripts/paper/pretrain_bert.sh), its settings from
    # the environment (PLATFORM, TPU_NAME, NUM_GPUS, ...).
    extra = [f"--{k}={flags[k]}" for k in ("objective", "keep_checkpoint_every_n_steps")]
    runner.run(
        f"pretraining/{run.name}",
        ["bash", os.path.join(REPO, "scripts", "paper", "pretrain_bert.sh"), run.shape],
        _pretrained_done(os.path.join(out, "phase2")),
        env={
            "DATA": train,
            "HELDOUT_DATA": heldout,
            "OUT": out,
            "VOCAB": data.vocab,
            "BERT_CONFIG": config,
            "EXTRA_FLAGS": " ".join(extra),
        },
    )
    return os.path.join(out, "phase2")


def _pretrained_done(out: str) -> str:
    return os.path.join(out, "pretrained", "bert_model.ckpt.index")


def kept_checkpoints(
    run: Pretraining, scale: Scale, data: Data, runner: Runner
) -> list[tuple[int, Model]]:
    """(step, model) along the way of `run` (paper Figure 5): every kept checkpoint, then the
    finished model. At the paper's sizes the kept ones are phase 1's."""
    out = pretrain(run, scale, data, runner)
    run_dir = out if scale.laptop else os.path.join(os.path.dirname(out), "phase1")
    config = os.path.join(run_dir, "bert_config.json")
    every = scale.keep_checkpoint_every_n_steps
    models = []
    for step in range(every, scale.pretraining_steps, every):
        if scale.laptop or step <= PHASE1_STEPS:
            kept = os.path.join(run_dir, "kept", f"ckpt-{step}")
            models.append((step, Model(f"{run.name}_step{step}", config, data.vocab, kept)))
    return models + [(scale.pretraining_steps, pretrained_model(run, scale, data, runner))]


def pretrained_model(run: Pretraining, scale, data, runner) -> Model:
    out = pretrain(run, scale, data, runner)
    pretrained = os.path.join(out, "pretrained")
    return Model(
        run.name,
        os.path.join(pretrained, "bert_config.json"),
        data.vocab,
        os.path.join(pretrained, "bert_model.ckpt"),
    )


def heldout_perplexity(run: Pretraining, scale, data, runner) -> float | None:
    out = pretrain(run, scale, data, runner)
    path = os.path.join(out, "eval_results.txt")
    if not os.path.isfile(path):
        return None
    results = read_results(path)
    return results.get("masked_lm_perplexity", results.get("lm_perplexity"))


# --- Fine-tuning -----------------------------------------------------------------------------


class FineTuner:
    """Fine-tunes a model on a task (unless done) and returns the table's metric."""

    def __init__(self, scale: Scale, data: Data, runner: Runner) -> None:
        self.scale, self.data, self.runner = scale, data, runner
        self.notes: dict[str, str] = {}  # column -> what stands in for it

    def _common(self, model: Model, kind: str, out: str, seed: int) -> dict:
        settings = self.scale.finetuning[kind]
        return {
            "vocab_file": model.vocab,
            "bert_config_file": model.bert_config,
            "init_checkpoint": model.init_checkpoint,
            "do_lower_case": False if self.scale.laptop else os.environ.get("DO_LOWER_CASE"),
            "output_dir": out,
            "max_seq_length": settings["max_seq_length"],
            "train_batch_size": settings["batch"],
            "learning_rate": settings["learning_rate"],
            "num_train_epochs": settings["epochs"],
            "seed": seed,
        }

    def _out(self, model: Model, task: str, seed: int) -> str:
        return os.path.join(self.runner.output_dir, "finetuning", model.name, task, f"seed{seed}")

    def glue(
        self,
        model: Model,
        column: str,
        bilstm: bool = False,
        table6: bool = False,
        predict: bool = False,
        metric: str | None = None,
    ) -> float | None:
        """The mean over restarts of a column's metric (in percent), or None without data.

        `column` is the paper's (MNLI-m, QNLI, MRPC, ...); its task or a stand-in is
        fine-tuned; `metric` is accuracy unless given (Table 1's F1, Spearman, ...).
        """
        found = self.data.glue(column)
        if found is None:
            return None
        data_dir, task, standin = found
        if standin:
            self.notes[column] = standin
        metric = metric or ("eval_mismatched_accuracy" if column == "MNLI-mm" else "eval_accuracy")
        restarts = self.scale.restarts.get(task, 1)
        if table6 and self.scale.table6_restarts:
            restarts = self.scale.table6_restarts
        values = []
        for seed in range(restarts):
            out = self._out(model, task + ("_bilstm" if bilstm else ""), seed)
            flags = self._common(model, "glue", out, seed)
            flags.update(task_name=task, data_dir=data_dir, do_train=True, do_eval=True)
            if predict and os.path.isfile(os.path.join(data_dir, "test.tsv")):
                flags["do_predict"] = True
            if bilstm:
                flags["bilstm"] = True
            done = os.path.join(out, "eval_results.txt")
            self.runner.python(
                f"finetuning/{model.name}/{out.split(os.sep)[-2]}/{seed}",
                "run_classifier.py",
                flags,
                done,
            )
            if os.path.isfile(done):
                values.append(100 * read_results(done)[metric])
        return _mean(values)

    def squad(self, model: Model, version: str, bilstm=False) -> dict | None:
        train, dev, standin = self.data.squad(version)
        if standin:
            self.notes[f"SQuAD {version}"] = standin
        kind = "squad2" if version == "2.0" else "squad1"
        out = self._out(model, f"squad{version}" + ("_bilstm" if bilstm else ""), 0)
        flags = self._common(model, kind, out, 0)
        flags.update(
            do_train=True,
            train_file=train,
            do_predict=True,
            predict_file=dev,
            version_2_with_negative=version == "2.0",
            bilstm=bilstm or None,
        )
        if self.scale.laptop:
            flags.update(doc_stride=64, max_query_length=32)
        done = os.path.join(out, "eval_results.json")
        name = f"finetuning/{model.name}/{os.path.basename(os.path.dirname(out))}"
        self.runner.python(name, "run_squad.py", flags, done)
        if version == "2.0" and os.path.isfile(done):
            # Tau chosen on Dev, as the paper: the threshold of the best F1, then predict again.
            tau_done = os.path.join(out, "eval_results_tau.json")
            if not os.path.isfile(tau_done):
                predict = {k: flags[k] for k in flags if k not in ("do_train", "train_file")}
                predict["null_score_diff_threshold"] = read_results(done)["best_f1_thresh"]
                self.runner.python(
                    f"finetuning/{model.name}/squad2_tau", "run_squad.py", predict, tau_done
                )
                if not self.runner.dry_run:
                    shutil.copyfile(done, tau_done)
            done = tau_done
        if not os.path.isfile(done):
            return None
        results = read_results(done)
        return {
            "EM": results.get("exact_match", results.get("exact")),
            "F1": results["f1"],
        }

    def ner(self, model: Model, feature: str | None = None) -> dict | None:
        kind = "ner_feature" if feature else "ner"
        out = self._out(model, f"ner_{feature or 'fine_tuning'}", 0)
        flags = self._common(model, kind, out, 0)
        flags.update(data_dir=self.data.conll(), do_train=True, do_eval=True, do_predict=True)
        if feature:
            flags.update(feature_based=feature, lstm_units=_hidden_size(model))
        done = os.path.join(out, "test_results.txt")
        self.runner.python(
            f"finetuning/{model.name}/ner_{feature or 'ft'}", "run_ner.py", flags, done
        )
        if not os.path.isfile(done):
            return None
        dev = read_results(os.path.join(out, "eval_results.txt"))
        return {"Dev F1": 100 * dev["eval_f1"], "Test F1": 100 * read_results(done)["test_f1"]}

    def swag(self, model: Model) -> float | None:
        data_dir, standin = self.data.swag()
        if standin:
            self.notes["SWAG"] = standin
        out = self._out(model, "swag", 0)
        flags = self._common(model, "swag", out, 0)
        flags.update(data_dir=data_dir, do_train=True, do_eval=True)
        done = os.path.join(out, "eval_results.txt")
        self.runner.python(f"finetuning/{model.name}/swag", "run_swag.py", flags, done)
        return 100 * read_results(done)["eval_accuracy"] if os.path.isfile(done) else None


# Table 1's metric per task (F1 for MRPC and QQP, Spearman for STS-B, Matthews for CoLA,
# accuracy elsewhere); Tables 5, 6 and 8 report MRPC accuracy.
TABLE1_METRICS = {
    "MRPC": "eval_f1",
    "QQP": "eval_f1",
    "STS-B": "eval_spearmanr",
    "CoLA": "eval_mcc",
}


def _hidden_size(model: Model) -> int:
    with open(model.bert_config, encoding="utf-8") as f:
        return json.load(f)["hidden_size"]


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


# --- Tables ----------------------------------------------------------------------------------


@dataclasses.dataclass
class Table:
    """Our numbers beside the paper's: rows x columns, with a note per stand-in."""

    name: str
    title: str
    rows: dict = dataclasses.field(default_factory=dict)  # row -> column -> value
    paper_rows: dict = dataclasses.field(default_factory=dict)  # our row -> the paper's row
    notes: list = dataclasses.field(default_factory=list)

    def set(self, row: str, column: str, value, paper_row: str | None = None) -> None:
        self.rows.setdefault(row, {})[column] = value
        if paper_row:
            self.paper_rows[row] = paper_row

    def columns(self) -> list[str]:
        return list(dict.fromkeys(c for values in self.rows.values() for c in values))

    def write(self, folder: str) -> None:
        os.makedirs(folder, exist_ok=True)
        paper = PAPER.get(self.name, {})
        lines = ["\t".join(["row", "column", "ours", "paper_row", "paper"])]
        for row, values in self.rows.items():
            paper_row = self.paper_rows.get(row, row)
            for column, value in values.items():
                theirs = paper.get(paper_row, {}).get(column)
                lines.append("\t".join([row, column, _cell(value), paper_row, _cell(theirs)]))
        _write(os.path.join(folder, f"{self.name}.tsv"), "\n".join(lines) + "\n")
        _write(os.path.join(folder, f"{self.name}.md"), self.markdown())

    def markdown(self) -> str:
        paper = PAPER.get(self.name, {})
        columns = self.columns()
        lines = [f"**{self.title}** (ours / paper)", ""]
        lines.append("| | " + " | ".join(columns) + " |")
        lines.append("|---" * (len(columns) + 1) + "|")
        for row, values in self.rows.items():
            theirs = paper.get(self.paper_rows.get(row, row), {})
            cells = [f"{_cell(values.get(c))} / {_cell(theirs.get(c))}" for c in columns]
            label = (
                row if row == self.paper_rows.get(row, row) else f"{row} ({self.paper_rows[row]})"
            )
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines += [""] + [f"- {note}" for note in self.notes]
        return "\n".join(lines) + "\n"


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return str(value)


def _write(path: str, text: str) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def _paper_name(scale: Scale) -> str:
    return "BERT-LARGE" if scale.name == "large" else "BERT-BASE"


def table1(ctx) -> Table:
    model = ctx.model(Pretraining(ctx.scale.base_shape))
    table = Table("table1", "Table 1: GLUE (ours: Dev; paper: Test)")
    row = f"ours ({ctx.scale.base_shape})"
    values = []
    for column in ("MNLI-m", "MNLI-mm", "QQP", "QNLI", "SST-2", "CoLA", "STS-B", "MRPC", "RTE"):
        found = ctx.data.glue(column)
        if found is None or found[2]:
            continue  # Table 1 takes the real tasks only, no stand-ins
        metric = TABLE1_METRICS.get(found[1])
        value = ctx.tuner.glue(model, column, predict=True, metric=metric)
        values.append(value)
        table.set(row, column, value, _paper_name(ctx.scale))
    present = [value for value in values if value is not None]
    table.set(row, "Average", _mean(present), _paper_name(ctx.scale))
    if len(present) < 9:
        table.notes.append("Average: over the tasks here (the paper's: all nine but WNLI).")
    table.notes.append(
        "MRPC and QQP: F1; STS-B: Spearman; CoLA: Matthews; others: accuracy. The test-set "
        "predictions (GLUE submission files) are in each run's output_dir."
    )
    return table


def table2(ctx) -> Table:
    model = ctx.model(Pretraining(ctx.scale.base_shape))
    table = Table("table2", "Table 2: SQuAD 1.1 Dev")
    result = ctx.tuner.squad(model, "1.1") or {}
    for column in ("EM", "F1"):
        table.set(
            f"ours ({ctx.scale.base_shape})", column, result.get(column), _paper_name(ctx.scale)
        )
    return table


def table3(ctx) -> Table:
    model = ctx.model(Pretraining(ctx.scale.base_shape))
    table = Table("table3", "Table 3: SQuAD 2.0 Dev (tau chosen on Dev)")
    result = ctx.tuner.squad(model, "2.0") or {}
    for column in ("EM", "F1"):
        table.set(f"ours ({ctx.scale.base_shape})", column, result.get(column), "BERT-LARGE")
    return table


def table4(ctx) -> Table:
    model = ctx.model(Pretraining(ctx.scale.base_shape))
    table = Table("table4", "Table 4: SWAG Dev accuracy")
    table.set(
        f"ours ({ctx.scale.base_shape})", "Dev", ctx.tuner.swag(model), _paper_name(ctx.scale)
    )
    return table


def table5(ctx) -> Table:
    table = Table("table5", "Table 5: pre-training tasks (Dev; MRPC accuracy; SQuAD 1.1 F1)")
    shape = ctx.scale.base_shape
    rows = (
        ("BERT-BASE", Pretraining(shape), False),
        ("No NSP", Pretraining(shape, "mlm"), False),
        ("LTR & No NSP", Pretraining(shape, "ltr"), False),
        ("+ BiLSTM", Pretraining(shape, "ltr"), True),
    )
    for row, run, bilstm in rows:
        model = ctx.model(run)
        label = row.replace("BERT-BASE", f"BERT ({shape})")
        for column in ("MNLI-m", "QNLI", "MRPC", "SST-2"):
            table.set(label, column, ctx.tuner.glue(model, column, bilstm), row)
        squad = ctx.tuner.squad(model, "1.1", bilstm) or {}
        table.set(label, "SQuAD", squad.get("F1"), row)
    return table


def table6(ctx) -> Table:
    table = Table("table6", "Table 6: model size (held-out masked-LM perplexity; Dev accuracy)")
    for ours, paper in zip(ctx.scale.table6_shapes, PAPER["table6"], strict=False):
        run = Pretraining(ours)
        model = ctx.model(run)
        label = ours.replace("L-", "").replace("_H-", "/").replace("_A-", "/")
        table.set(
            label, "LM (ppl)", heldout_perplexity(run, ctx.scale, ctx.data, ctx.runner), paper
        )
        for column in ("MNLI-m", "MRPC", "SST-2"):
            table.set(label, column, ctx.tuner.glue(model, column, table6=True), paper)
    table.notes.append(
        "Rows are ours (L/H/A) beside the paper's row of the same rank; means over "
        "restarts as the paper's."
    )
    return table


def table7(ctx) -> Table:
    model = ctx.model(Pretraining(ctx.scale.base_shape))
    table = Table("table7", "Table 7: CoNLL-2003 NER (F1)")
    table.set("Fine-tuning", "Dev F1", None, "Fine-tuning (BASE)")
    result = ctx.tuner.ner(model) or {}
    for column in ("Dev F1", "Test F1"):
        table.set("Fine-tuning", column, result.get(column), "Fine-tuning (BASE)")
    for feature in NER_FEATURES:
        table.set(feature, "Dev F1", (ctx.tuner.ner(model, feature) or {}).get("Dev F1"))
    table.notes.append("Feature-based: frozen BERT, a two-layer BiLSTM of H units per direction.")
    return table


def table8(ctx) -> Table:
    table = Table("table8", "Table 8: masking procedure (MASK/SAME/RND; Dev)")
    for masking in TABLE8_MASKINGS:
        model = ctx.model(Pretraining(ctx.scale.base_shape, masking=masking))
        row = "/".join(str(round(100 * float(r))) for r in masking.split(","))
        table.set(row, "MNLI", ctx.tuner.glue(model, "MNLI-m"))
        table.set(row, "NER fine-tune", (ctx.tuner.ner(model) or {}).get("Dev F1"))
        feature = (ctx.tuner.ner(model, TABLE8_FEATURE) or {}).get("Dev F1")
        table.set(row, "NER feature-based", feature)
    return table


def figure5(ctx) -> Table:
    """Dev accuracy of the MLM and LTR models along their pre-training, by step."""
    table = Table("figure5", "Figure 5: Dev accuracy by pre-training steps")
    for objective, label in (("mlm_nsp", "MLM"), ("ltr", "LTR")):
        run = Pretraining(ctx.scale.base_shape, objective)
        for step, model in kept_checkpoints(run, ctx.scale, ctx.data, ctx.runner):
            for column in ("MNLI-m", "QNLI"):
                table.set(f"{label} step {step}", column, ctx.tuner.glue(model, column))
    return table


class Context:
    def __init__(self, scale: Scale, runner: Runner) -> None:
        self.scale, self.runner = scale, runner
        self.data = Data(scale, runner, runner.output_dir)
        self.tuner = FineTuner(scale, self.data, runner)

    def model(self, run: Pretraining) -> Model:
        return pretrained_model(run, self.scale, self.data, self.runner)


BUILDERS = {
    "table1": table1,
    "table2": table2,
    "table3": table3,
    "table4": table4,
    "table5": table5,
    "table6": table6,
    "table7": table7,
    "table8": table8,
    "figure5": figure5,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", default="all", help="comma-separated: table1..8, figure5")
    parser.add_argument("--size", choices=["small", "base", "large"], required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--quick", action="store_true", help="small in minutes (smoke test)")
    parser.add_argument("--dry_run", action="store_true", help="print the commands only")
    args = parser.parse_args()
    names = list(BUILDERS) if args.tables == "all" else args.tables.split(",")
    unknown = [name for name in names if name not in BUILDERS]
    if unknown:
        sys.exit(
            f"reproduce.py: error: --tables={args.tables}; unknown {unknown}, expected "
            f"some of {', '.join(BUILDERS)} or all"
        )
    if args.quick and args.size != "small":
        sys.exit("reproduce.py: error: --quick shrinks --size=small only")
    scale = small_scale(args.quick) if args.size == "small" else paper_scale(args.size)
    runner = Runner(os.path.abspath(args.output_dir), args.dry_run)
    context = Context(scale, runner)
    for name in names:
        table = BUILDERS[name](context)
        table.notes += [f"{column}: {what}." for column, what in context.tuner.notes.items()]
        context.tuner.notes = {}
        if not args.dry_run:
            table.write(os.path.join(runner.output_dir, "tables"))
            print(table.markdown())


if __name__ == "__main__":
    main()
