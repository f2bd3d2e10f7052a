"""Runs the reproduction's steps: each command once, skipped when its output exists, logged."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


# A rough cost of a step, in fine-tuning runs (a pre-training run takes about 15 of them on a
# CPU), for the ETA of the whole reproduction.
PRETRAINING_WEIGHT = 15


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
        self.env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
        self.started = time.monotonic()
        self.printed: list[str] = []
        # The steps a counting pass found pending: the total of the progress lines.
        self.pending = pending or []
        self.total_weight = sum(_weight(step) for step in self.pending)
        self.weight_done = 0

    def run(self, name: str, command: list[str], done: str, env: dict | None = None) -> None:
        """Runs `command` (from the repository root) unless `done` exists."""
        if os.path.exists(done):
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
        os.makedirs(os.path.dirname(log), exist_ok=True)
        print(f"{self.progress(name)} {name} (log: {log})", flush=True)
        self.weight_done += _weight(name)
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
        command += [f"--{key}={value}" for key, value in flags.items() if value is not None]
        self.run(name, command + list(extra), done)


def read_results(path: str) -> dict[str, float]:
    """eval_results.txt (`key = value`) or eval_results.json."""
    with open(path, encoding="utf-8") as f:
        if path.endswith(".json"):
            return {k: float(v) for k, v in json.load(f).items()}
        return {k: float(v) for k, v in (line.strip().split(" = ") for line in f if " = " in line)}
