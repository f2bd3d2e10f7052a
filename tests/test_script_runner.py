"""The tests' way of running a script (tests/script_runner.py, through conftest.run_script):
forked from a process that imported TensorFlow, it runs the script as `python script.py` does:
the same `__main__`, arguments, path, folder, environment, output and exit status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
import script_runner
from conftest import REPO, SCRIPT_ENV

PROBE = """
import json, os, sys
print(json.dumps({
    "name": __name__, "file": __file__, "argv": sys.argv, "path": sys.path,
    "cwd": os.getcwd(), "variable": os.environ.get("PROBE_VARIABLE"),
    "stdin": sys.stdin.read(),
}))
print("to stderr", file=sys.stderr)
os.write(2, b"to file descriptor 2\\n")
what = sys.argv[1]
if what == "raise":
    raise ValueError("uncaught")
if what == "kill":
    os.kill(os.getpid(), 9)
if what == "hang":
    import time
    time.sleep(60)
sys.exit(int(what) if what.isdigit() else what)
"""


def both_ways(script, *args: str, env=None):
    """The probe run by `python` itself and by the runner: (fresh, forked)."""
    env = {**SCRIPT_ENV, "PROBE_VARIABLE": "set", **(env or {})}
    fresh = subprocess.run(
        [sys.executable, str(script), *args], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    forked = script_runner.run([str(script), *args], env=env, cwd=REPO, timeout=60)
    return fresh, forked


@pytest.fixture
def probe(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    return path


@pytest.mark.parametrize("status", ["0", "3", "a message"])
def test_a_script_sees_what_python_gives_it_and_exits_as_it_would(probe, status):
    fresh, forked = both_ways(probe, status)
    assert forked.returncode == fresh.returncode == (1 if status == "a message" else int(status))
    assert json.loads(forked.stdout) == json.loads(fresh.stdout)
    assert forked.stderr == fresh.stderr  # Python's prints and file descriptor 2 alike
    assert forked.args == fresh.args


def test_code_given_with_c_runs_as_python_c_runs_it():
    code = (
        "import json, os, sys\n"
        "print(json.dumps([__name__, '__file__' in globals(), sys.argv, sys.path, os.getcwd()]))\n"
        "sys.exit(int(sys.argv[1]))"
    )
    fresh, forked = both_ways("-c", code, "4")
    assert forked.returncode == fresh.returncode == 4
    assert json.loads(forked.stdout) == json.loads(fresh.stdout)


def test_an_uncaught_exception_is_a_traceback_and_status_1(probe):
    fresh, forked = both_ways(probe, "raise")
    assert forked.returncode == fresh.returncode == 1
    assert forked.stderr.splitlines()[-1] == fresh.stderr.splitlines()[-1]
    assert "ValueError: uncaught" in forked.stderr.splitlines()[-1]
    assert "Traceback (most recent call last):" in forked.stderr


def test_a_script_killed_by_a_signal_has_its_negative_number(probe):
    fresh, forked = both_ways(probe, "kill")
    assert forked.returncode == fresh.returncode == -signal.SIGKILL


def test_a_run_past_its_timeout_is_killed_and_raises_as_subprocess_does(probe):
    with pytest.raises(subprocess.TimeoutExpired):
        script_runner.run([str(probe), "hang"], env=SCRIPT_ENV, cwd=REPO, timeout=2)


def test_a_variable_tensorflow_reads_on_import_sends_the_run_to_a_fresh_interpreter(
    probe, monkeypatch
):
    monkeypatch.delenv("BERT_TF_TESTS_FRESH", raising=False)
    script_runner.run([str(probe), "0"], env=SCRIPT_ENV, cwd=REPO, timeout=60)  # started
    assert script_runner.can_run([str(probe)], SCRIPT_ENV)
    assert script_runner.can_run([str(probe)], {**SCRIPT_ENV, "TF_CONFIG": "{}"})  # read later
    for variable in ("KERAS_BACKEND", "TF_CPP_MIN_LOG_LEVEL", "PYTHONPATH"):
        assert not script_runner.can_run([str(probe)], {**SCRIPT_ENV, variable: "other"})


def test_only_a_python_file_or_c_code_starts_from_the_forkserver(probe):
    assert script_runner.can_run([str(probe), "0"], SCRIPT_ENV)
    assert script_runner.can_run(["-c", "print(1)"], SCRIPT_ENV)
    assert not script_runner.can_run(["-m", "pytest"], SCRIPT_ENV)  # a module: its own run
    assert not script_runner.can_run(["scripts/quickstart.sh"], SCRIPT_ENV)


def test_the_environment_variable_runs_every_script_fresh(probe, monkeypatch):
    monkeypatch.setitem(os.environ, "BERT_TF_TESTS_FRESH", "1")
    assert not script_runner.can_run([str(probe)], SCRIPT_ENV)
