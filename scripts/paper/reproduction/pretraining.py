"""The pre-training runs the tables compare: each shape, objective and masking once."""

from __future__ import annotations

import dataclasses
import functools
import os
import re

from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text
from reproduction.datasets import Data
from reproduction.runner import COMMIT_LINE, REPO, Runner, checkout_commit, read_results
from reproduction.scales import DEFAULT_MASKING, MASK_ONLY, PHASE1_STEPS, Scale


@dataclasses.dataclass(frozen=True)
class Model:
    """A pre-trained model to fine-tune: its files, its width, and a name for its results."""

    name: str
    bert_config: str
    vocab: str
    init_checkpoint: str
    hidden_size: int
    # Pre-trained on cased text with a cased vocab: fine-tuned without lower-casing.
    cased: bool = False


@dataclasses.dataclass(frozen=True)
class Pretraining:
    """One pre-training run: a shape, an objective (Table 5) and masking rates (Table 8), on
    uncased text, or cased (the paper's NER model; at the paper's sizes only: the laptop
    sizes' corpus and vocab are cased for every run)."""

    shape: str
    objective: str = "mlm_nsp"
    masking: str = DEFAULT_MASKING
    # Pre-training steps, where not the scale's (Tables 6 and 8 at `long`); 0: the scale's.
    steps: int = 0
    cased: bool = False
    # Its learning rate, where not the scale's (Tables 6 and 8 at `long`); 0: the scale's.
    learning_rate: float = 0.0
    # Its warm-up steps, where not the scale's share (Tables 6 and 8 at `long40k`); 0: that.
    warmup_steps: int = 0
    # run_pretraining.py's --seed (initial weights, dropout, record order): a second seed of
    # the same records and recipe measures the pre-training's own variance.
    seed: int = 1

    @property
    def hidden_size(self) -> int:
        """H of the shape's name, L-<layers>_H-<hidden>_A-<heads>."""
        return int(re.fullmatch(r"L-\d+_H-(\d+)_A-\d+", self.shape).group(1))

    @property
    def name(self) -> str:
        name = f"{self.shape}_{self.objective}_{self.masking.replace(',', '_')}"
        return (
            name
            + ("_cased" if self.cased else "")
            + (f"_{self.steps}steps" if self.steps else "")
            + (f"_lr{self.learning_rate:g}" if self.learning_rate else "")
            + (f"_warmup{self.warmup_steps}" if self.warmup_steps else "")
            + (f"_seed{self.seed}" if self.seed != 1 else "")
        )

    @classmethod
    def from_name(cls, name: str) -> tuple[Pretraining, int] | None:
        """The run of a `name` (a folder under OUT/pretraining) and the step of the kept
        checkpoint it names (`kept_checkpoints`' `RUN_step<N>`; 0 for the run's end), or None
        for another name."""
        found = re.fullmatch(_NAME, name)
        if not found:
            return None
        shape, objective, masking, cased, steps, learning_rate, warmup, seed, kept = found.groups()
        run = cls(
            shape, objective, masking.replace("_", ","), int(steps or 0), bool(cased),
            float(learning_rate or 0), int(warmup or 0), int(seed or 1),
        )  # fmt: skip
        return run, int(kept or 0)


_NAME = (
    r"(L-\d+_H-\d+_A-\d+)_(mlm_nsp|mlm|ltr)_([\d.]+_[\d.]+_[\d.]+)(_cased)?(?:_(\d+)steps)?"
    r"(?:_lr([\d.e-]+))?(?:_warmup(\d+))?(?:_seed(\d+))?(?:_step(\d+))?"
)


def table6_run(
    scale: Scale, shape: str, masking: str = DEFAULT_MASKING, cased: bool = False
) -> Pretraining:
    """The pre-training of Tables 6 (model size) and 8 (masking): `shape` masked at `masking`,
    at the steps, rate and warm-up the scale gives those tables."""
    return Pretraining(
        shape, masking=masking, steps=scale.table6_steps, cased=cased,
        learning_rate=scale.table6_learning_rate, warmup_steps=scale.table6_warmup_steps,
    )  # fmt: skip


def ablation_run(scale: Scale, shape: str, objective: str = "mlm_nsp") -> Pretraining:
    """The pre-training of Table 5's rows and Figure 5's curves: `shape` with `objective`, at
    the base model's recipe, or at Tables 6 and 8's where the scale gives every ablation one
    (`long40k`: BERT's row is then Table 6's run of that shape)."""
    if scale.ablations_at_table6_recipe:
        return dataclasses.replace(table6_run(scale, shape), objective=objective)
    return Pretraining(shape, objective)


def pretrain(run: Pretraining, scale: Scale, data: Data, runner: Runner) -> str:
    """Pre-trains `run` unless it is done; returns its output directory."""
    out = os.path.join(runner.output_dir, "pretraining", run.name)
    config = os.path.join(out, "shape.json")
    train, heldout = data.records(run.masking, run.cased)
    vocab = data.vocab_file(run.cased)
    runner.python(
        f"pretraining/{run.name}/config",
        "scripts/make_bert_config.py",
        {"size": run.shape, "vocab_file": vocab, "output_file": config},
        config,
    )
    flags = {
        "bert_config_file": config,
        "input_file": train,
        "eval_input_file": heldout,
        "output_dir": out,
        "vocab_file": vocab,
        "objective": run.objective,
        "keep_checkpoint_every_n_steps": scale.keep_checkpoint_every_n_steps,
    }
    if scale.laptop:
        steps = run.steps or scale.pretraining_steps
        flags.update(
            do_train=True,
            do_eval=True,
            train_batch_size=scale.train_batch_size,
            eval_batch_size=32,
            max_eval_steps=1000,
            learning_rate=run.learning_rate or scale.learning_rate,
            num_train_steps=steps,
            num_warmup_steps=run.warmup_steps or scale.warmup(steps),
            # Often enough that a stopped run loses minutes, not hours.
            save_checkpoints_steps=min(scale.keep_checkpoint_every_n_steps, 1000),
            log_steps=max(steps // 40, 1),
            use_xla=scale.use_xla,
            seed=run.seed,
            resume_input=True,  # a run stopped and resumed sees each record once
        )
        runner.python(f"pretraining/{run.name}", "run_pretraining.py", flags, _pretrained_done(out))
        return out
    # The paper's recipe, two phases (scripts/paper/pretrain_bert.sh), its settings from
    # the environment (PLATFORM, TPU_NAME, NUM_GPUS, ...).
    extra = [f"--{k}={flags[k]}" for k in ("objective", "keep_checkpoint_every_n_steps")]
    extra += [f"--seed={run.seed}"] if run.seed != 1 else []
    runner.run(
        f"pretraining/{run.name}",
        ["bash", os.path.join(REPO, "scripts", "paper", "pretrain_bert.sh"), run.shape],
        _pretrained_done(os.path.join(out, "phase2")),
        env={
            "DATA": train,
            "HELDOUT_DATA": heldout,
            "OUT": out,
            "VOCAB": vocab,
            "BERT_CONFIG": config,
            # The user's EXTRA_FLAGS (--gradient_accumulation_steps, say) after ours.
            "EXTRA_FLAGS": " ".join([*extra, os.environ.get("EXTRA_FLAGS", "")]).strip(),
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
    every, steps = scale.keep_checkpoint_every_n_steps, run.steps or scale.pretraining_steps
    models = []
    for step in range(every, steps, every):
        if scale.laptop or step <= PHASE1_STEPS:
            kept = os.path.join(run_dir, "kept", f"ckpt-{step}")
            name = f"{run.name}_step{step}"
            model = Model(
                name, config, data.vocab_file(run.cased), kept, run.hidden_size, run.cased
            )
            models.append((step, model))
    return models + [(steps, pretrained_model(run, scale, data, runner))]


def pretrained_model(run: Pretraining, scale, data, runner) -> Model:
    out = pretrain(run, scale, data, runner)
    pretrained = os.path.join(out, "pretrained")
    return Model(
        run.name,
        os.path.join(pretrained, "bert_config.json"),
        data.vocab_file(run.cased),
        os.path.join(pretrained, "bert_model.ckpt"),
        run.hidden_size,
        run.cased,
    )


def random_model(shape: str, data: Data, runner: Runner, cased: bool = False) -> Model:
    """A randomly initialised model of `shape` (no pre-training): our reference row, the floor
    that pre-training is measured from (with the cased vocab where the rows are cased)."""
    run = Pretraining(shape, cased=cased and not data.scale.laptop)
    name = f"{shape}_random" + ("_cased" if run.cased else "")
    out = os.path.join(runner.output_dir, "pretraining", name)
    config = os.path.join(out, "shape.json")
    vocab = data.vocab_file(run.cased)
    runner.python(
        f"pretraining/{name}/config",
        "scripts/make_bert_config.py",
        {"size": shape, "vocab_file": vocab, "output_file": config},
        config,
    )
    runner.python(
        f"pretraining/{name}",
        "scripts/make_random_bert.py",
        {"bert_config_file": config, "output_dir": out},
        os.path.join(out, "bert_model.ckpt.index"),
    )
    return Model(
        name,
        os.path.join(out, "bert_config.json"),
        vocab,
        os.path.join(out, "bert_model.ckpt"),
        run.hidden_size,
        run.cased,
    )


def heldout_perplexity(run: Pretraining, scale, data, runner) -> float | None:
    out = pretrain(run, scale, data, runner)
    path = os.path.join(out, "eval_results.txt")
    if not filesystem.isfile(path):
        return None
    results = read_results(path)
    return results.get("masked_lm_perplexity", results.get("lm_perplexity"))


def mask_only_perplexity(model: Model, scale, data, runner) -> float | None:
    """Held-out masked-LM perplexity of `model` on the 100/0/0 records, where every predicted
    token is [MASK]: one yardstick for models pre-trained with different masking (Table 8),
    and without the unchanged tokens a model can learn to copy. Our addition: the paper
    reports none. A cased model's on the cased records."""
    heldout = data.split_records(MASK_ONLY, "heldout", model.cased)
    out = os.path.join(runner.output_dir, "pretraining", model.name, "eval_mask_only")
    flags = {
        "bert_config_file": model.bert_config,
        "init_checkpoint": model.init_checkpoint,
        "objective": "mlm",  # the masked LM's loss only
        "output_dir": out,
        "do_eval": True,
        "eval_batch_size": 32,
        "max_eval_steps": 1000,
    }
    if scale.laptop:
        flags["input_file"] = heldout
    else:  # the final phase's records (scripts/create_pretraining_data_two_phases.sh)
        flags.update(
            input_file=os.path.join(heldout, "phase2_seq512", "part.tfrecord-*"),
            max_seq_length=512,
            max_predictions_per_seq=80,
        )
    done = os.path.join(out, "eval_results.txt")
    runner.python(f"pretraining/{model.name}/eval_mask_only", "run_pretraining.py", flags, done)
    if not filesystem.isfile(done):
        return None
    return read_results(done).get("masked_lm_perplexity")


def unigram_perplexity(scale: Scale, data: Data, runner: Runner) -> float | None:
    """A unigram model's perplexity on the all-[MASK] held-out records (see
    mask_only_perplexity): each masked token predicted from its frequency among the training
    records' predictions, whatever its context. The plateau a masked LM that has learned no
    context sits on. OUT/pretraining/unigram/eval_mask_only/eval_results.txt."""
    train = data.split_records(DEFAULT_MASKING, "train")
    heldout = data.split_records(MASK_ONLY, "heldout")
    if not scale.laptop:  # the final phase's records, as mask_only_perplexity's
        train = os.path.join(train, "phase2_seq512", "part.tfrecord-*")
        heldout = os.path.join(heldout, "phase2_seq512", "part.tfrecord-*")
    done = os.path.join(runner.output_dir, "pretraining", "unigram", "eval_mask_only")
    done = os.path.join(done, "eval_results.txt")
    flags = {
        "train_records": train,
        "heldout_records": heldout,
        "vocab_file": data.vocab,
        "output_file": done,
    }
    runner.python(
        "pretraining/unigram/eval_mask_only", "scripts/paper/unigram_baseline.py", flags, done
    )
    return read_results(done).get("masked_lm_perplexity") if filesystem.isfile(done) else None


RESULT_COLUMNS = [
    "global_step",
    "masked_lm_loss",
    "masked_lm_perplexity",
    "masked_lm_accuracy",
    "next_sentence_accuracy",
    "lm_loss",
    "lm_perplexity",
    "lm_accuracy",
]
MASK_ONLY_COLUMNS = ["masked_lm_loss", "masked_lm_perplexity", "masked_lm_accuracy"]


def tokens_seen(name: str, scale: Scale, data: Data) -> int | None:
    """The tokens (real ones, not padding) that the finished run `name` was trained on: its
    steps x batch x the mean tokens of its training records, each phase's at the paper's
    sizes; None for a run that is not finished or not pre-trained."""
    found = Pretraining.from_name(name)
    if found is None:
        return None
    run, kept_step = found
    folder = os.path.join(data.runner.output_dir, "pretraining", run.name)
    train = data.split_records(run.masking, "train")
    if kept_step:  # a checkpoint along the way (phase 1's at the paper's sizes)
        files = sorted(
            filesystem.glob(train if scale.laptop else os.path.join(train, "phase1*", "*"))
        )
        return round(kept_step * scale.train_batch_size * _mean_tokens(tuple(files)))
    phases = [(folder, train)]
    if not scale.laptop:  # scripts/create_pretraining_data_two_phases.sh's folders
        phases = [
            (os.path.join(folder, "phase1"), os.path.join(train, "phase1_seq128", "*")),
            (os.path.join(folder, "phase2"), os.path.join(train, "phase2_seq512", "*")),
        ]
    tokens = 0.0
    for run_dir, records in phases:
        results, files = os.path.join(run_dir, "eval_results.txt"), sorted(filesystem.glob(records))
        if not filesystem.isfile(results) or not files:
            return None
        steps = read_results(results)["global_step"]
        tokens += steps * scale.train_batch_size * _mean_tokens(tuple(files))
    return round(tokens)


@functools.lru_cache
def _mean_tokens(files: tuple[str, ...]) -> float:
    """mean_tokens_per_record, read once per set of records (many runs share one)."""
    from bert_tf.pretraining.dataset import mean_tokens_per_record  # TensorFlow: only here

    return mean_tokens_per_record(list(files))


def write_results(output_dir: str, path: str, schedule: str, tokens=lambda name: None) -> int:
    """Writes `path` (TSV): each model under OUT/pretraining with results, its held-out
    eval_results.txt (the final phase's at the paper's sizes) and its results on the all-[MASK]
    records (`mask_only_*`, see mask_only_perplexity; the random-weights models have only
    these); "-" where a model has none. Each row starts with `schedule` (the scale's name) and
    has the tokens the run saw, `tokens(run name)`. Returns the number of rows."""
    header = ["schedule", "run", "tokens"] + RESULT_COLUMNS
    header += [f"mask_only_{c}" for c in MASK_ONLY_COLUMNS]
    rows = []
    root = os.path.join(output_dir, "pretraining")
    for name in sorted(filesystem.listdir(root)) if filesystem.isdir(root) else []:
        run = os.path.join(root, name)
        final = [
            os.path.join(run, "eval_results.txt"),
            os.path.join(run, "phase2", "eval_results.txt"),
        ]
        done = [p for p in final if filesystem.isfile(p)]
        mask_only_path = os.path.join(run, "eval_mask_only", "eval_results.txt")
        if not done and not filesystem.isfile(mask_only_path):
            continue
        results = read_results(done[0]) if done else {}
        mask_only = read_results(mask_only_path) if filesystem.isfile(mask_only_path) else {}
        cells = [tokens(name)] + [results.get(c) for c in RESULT_COLUMNS]
        cells += [mask_only.get(c) for c in MASK_ONLY_COLUMNS]
        rows.append([schedule, name] + [_cell(value) for value in cells])
    atomic_write_text(path, "".join("\t".join(row) + "\n" for row in [header] + rows))
    return len(rows)


def _cell(value: float | int | None) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:g}"


# The steps of each pre-training whose training losses the record keeps (issue 94), and what
# of each step's log line.
TRAINING_STEPS = (500, 1000, 5000, 10000, 40000)
TRAINING_COLUMNS = ("loss", "masked_lm_loss", "masked_lm_accuracy", "next_sentence_accuracy",
                    "lm_loss")  # fmt: skip
STEP_LINE = re.compile(r"\] step (\d+)/\d+: (.*?)(?:, ETA .*)?$", re.M)


@dataclasses.dataclass
class TrainingLog:
    """What a pre-training's log says: the commit and command it ran, and each logged step's
    values (the first time the step was logged: a resumed run logs none twice)."""

    commit: str
    command: str
    steps: dict  # step -> {name: value as logged}


def read_training_log(text: str, output_dir: str) -> TrainingLog:
    """`text`: OUT/logs/pretraining_RUN.log. The command as a user reruns it: `python`, the
    script by its path in the repository, OUT for `output_dir`. The commit: the log's own line
    (runner.py writes one), else the HEAD of the checkout the command's script was run from."""
    commit, command = "-", "-"
    for line in text.splitlines():
        if line.startswith(COMMIT_LINE) and commit == "-":
            commit = line[len(COMMIT_LINE) :].strip()
        if line.startswith("$ ") and command == "-":
            words = line[2:].split()
            checkout = os.path.dirname(words[1])
            if commit == "-" and os.path.isdir(checkout):
                commit = checkout_commit(checkout)
            script = os.path.relpath(words[1], checkout)
            command = " ".join(["python", script] + words[2:]).replace(output_dir, "OUT")
    steps = {}
    for match in STEP_LINE.finditer(text):
        values = dict(pair.split("=", 1) for pair in match.group(2).split(", ") if "=" in pair)
        steps.setdefault(int(match.group(1)), values)
    return TrainingLog(commit, command, steps)


def write_training(output_dir: str, path: str, schedule: str) -> int:
    """Writes `path` (TSV): for each pre-training under OUT/pretraining with a log, its
    training losses at TRAINING_STEPS (those it logged), the commit and the command. Returns
    the number of rows."""
    header = ["schedule", "run", "step", *TRAINING_COLUMNS, "commit", "command"]
    rows = []
    root = os.path.join(output_dir, "pretraining")
    for name in sorted(filesystem.listdir(root)) if filesystem.isdir(root) else []:
        log = os.path.join(output_dir, "logs", f"pretraining_{name}.log")
        if not filesystem.isfile(log):
            continue
        with filesystem.open_file(log, "r") as f:
            found = read_training_log(f.read(), output_dir)
        for step in TRAINING_STEPS:
            if step in found.steps:
                values = [found.steps[step].get(column, "-") for column in TRAINING_COLUMNS]
                rows.append([schedule, name, str(step), *values, found.commit, found.command])
    atomic_write_text(path, "".join("\t".join(row) + "\n" for row in [header] + rows))
    return len(rows)
