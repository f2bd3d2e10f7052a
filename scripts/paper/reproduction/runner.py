"""Runs the reproduction's steps: each command once, skipped when its output exists, logged."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


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
