"""Runs the reproduction's steps: each command once, skipped when its output exists, logged."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
COMMIT_LINE = "# bert_tf commit "  # a log's line naming the commit its command ran at


def checkout_commit(folder: str) -> str:
    """The commit checked out in `folder` (its git HEAD), or "-" outside a git checkout."""
    found = subprocess.run(
        ["git", "-C", folder, "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True
    )
    return found.stdout.strip() if found.returncode == 0 else "-"


# A rough cost of a step, in fine-tuning runs (a pre-training run takes about 15 of them on a
# CPU), for the ETA of the whole reproduction.
PRETRAINING_WEIGHT = 15


# The scripts that run a model, to which the accelerator's flags go.
ACCELERATED = (
    "run_pretraining.py",
    "run_classifier.py",
    "run_squad.py",
    "run_ner.py",
    "run_swag.py",
)


def platform_flags(env: dict) -> dict:
    """The accelerator's flags of every model step at the paper's sizes, from the environment
    that scripts/paper/pretrain_bert.sh reads: PLATFORM tpu (TPU_NAME, TPU_ZONE, GCP_PROJECT),
    gpu (NUM_GPUS, mixed_float16 and XLA; the default, as there) or cpu."""
    platform = env.get("PLATFORM", "gpu")
    if platform == "tpu":
        flags = {"use_tpu": True, "tpu_name": env.get("TPU_NAME", "")}
        return {**flags, "tpu_zone": env.get("TPU_ZONE"), "gcp_project": env.get("GCP_PROJECT")}
    if platform == "gpu":
        return {
            "distribution_strategy": "mirrored",
            "num_gpus": env.get("NUM_GPUS", "8"),
            "dtype": "mixed_float16",
            "use_xla": True,
        }
    return {}


def _weight(name: str) -> int:
    pretraining = name.startswith("pretraining/") and not name.endswith(("/config", "_random"))
    return PRETRAINING_WEIGHT if pretraining else 1


class Runner:
    """Runs each step's command unless its output exists; logs go to OUT/logs/.

    With `dry_run` it prints the commands instead (or, `quiet`, only records the pending
    steps' names: a first pass that counts the work for the progress lines).
    """

    def __init__(
        self, output_dir: str, dry_run: bool, quiet: bool = False, pending: list | None = None
    ) -> None:
        self.output_dir, self.dry_run, self.quiet = output_dir, dry_run, quiet
        # The accelerator's flags, added to every model step (`platform_flags`; none on a
        # laptop).
        self.accelerator: dict = {}
        self.env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
        self.started = time.monotonic()
        self.printed: list[str] = []
        # The steps a counting pass found pending: the total of the progress lines.
        self.pending = pending or []
        self.total_weight = sum(_weight(step) for step in self.pending)
        self.weight_done = 0

    def is_done(self, name: str, done: str) -> bool:
        """A step is done once its marker is written, after its command succeeded; or, from
        before markers, once `done` is a file (the scripts write each file whole, last)."""
        return filesystem.exists(self._marker(name)) or filesystem.isfile(done)

    def _marker(self, name: str) -> str:
        return os.path.join(self.output_dir, "logs", name.replace("/", "_") + ".done")

    def run(self, name: str, command: list[str], done: str, env: dict | None = None) -> None:
        """Runs `command` (from the repository root) unless the step is done (`is_done`)."""
        if self.is_done(name, done):
            return
        log = os.path.join(self.output_dir, "logs", name.replace("/", "_") + ".log")
        line = " ".join(shlex.quote(part) for part in command)
        if self.dry_run:
            if name in self.printed:
                return
            self.printed.append(name)
            prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
            if not self.quiet:
                print(f"# {name}\n{prefix + ' ' if prefix else ''}{line}")
            return
        # A command writes its log to a local file; one under a URL gets a copy after each step.
        local_log = log
        if filesystem.is_url(log):
            local_log = os.path.join(tempfile.gettempdir(), "bert_tf_logs", os.path.basename(log))
        filesystem.makedirs(os.path.dirname(local_log))
        print(f"{self.progress(name)} {name} (log: {log})", flush=True)
        self.weight_done += _weight(name)
        with filesystem.open_file(local_log, "a") as f:
            f.write(f"{COMMIT_LINE}{checkout_commit(REPO)}\n$ {line}\n")
            f.flush()
            result = subprocess.run(
                command, cwd=REPO, env={**self.env, **(env or {})}, stdout=f, stderr=f
            )
        if local_log != log:
            filesystem.copy(local_log, log)
        if result.returncode != 0:
            with filesystem.open_file(local_log) as f:
                tail = f.read().strip().splitlines()[-1:]
            sys.exit(f"reproduce.py: error: step {name} failed: {' '.join(tail)} (see {log})")
        atomic_write_text(self._marker(name), line + "\n")

    def progress(self, name: str) -> str:
        """[step i/N, elapsed, a rough ETA from the weighted steps done so far]."""
        elapsed = time.monotonic() - self.started
        text = f"[{elapsed / 60:.0f} min"
        if name in self.pending:
            text += f", step {self.pending.index(name) + 1}/{len(self.pending)}"
            if self.weight_done:
                eta = elapsed / self.weight_done * max(self.total_weight - self.weight_done, 0)
                text += f", ETA ~{eta / 60:.0f} min" if eta < 3600 else f", ETA ~{eta / 3600:.1f} h"
        return text + "]"

    def python(self, name: str, script: str, flags: dict, done: str, *extra: str) -> None:
        command = [sys.executable, os.path.join(REPO, script)]
        if os.path.basename(script) in ACCELERATED:
            flags = {**flags, **self.accelerator}
        command += [f"--{key}={value}" for key, value in flags.items() if value is not None]
        self.run(name, command + list(extra), done)


def read_results(path: str) -> dict[str, float]:
    """eval_results.txt (`key = value`) or eval_results.json."""
    with filesystem.open_file(path) as f:
        if path.endswith(".json"):
            return {k: float(v) for k, v in json.load(f).items()}
        return {k: float(v) for k, v in (line.strip().split(" = ") for line in f if " = " in line)}
