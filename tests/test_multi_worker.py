"""A multi-worker run that loses a worker (issue 60), with real local worker processes: a tiny
BERT with dropout, two workers, a fixed seed, --resume_input.

- kill -9 of either worker after the first checkpoint: the survivor stops by itself within a
  minute, with one line naming the lost worker, the step and the last complete checkpoint, and
  exit status 75 (start the group again), no traceback;
- SIGTERM of one worker: both stop at one step, saved by the chief, exit status 143;
- either way, the group started again with the same flags ends with the weights of a run never
  interrupted; scripts/local_cluster.py does that restart by itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from conftest import (
    REPO,
    SCRIPT_ENV,
    run_script,
    sample_pretraining_records,
    start_workers,
    tiny_config_dict,
)

from bert_tf.errors import RESTART_EXIT_STATUS, Preempted, TrainingDiverged, WorkerLost
from bert_tf.training.distribute import lost_worker
from bert_tf.training.local_cluster import restartable, run_local_cluster, worker_command
from bert_tf.training.preemption import StopFlag, sigterm_held

STEPS = 100
PREEMPTED = 128 + signal.SIGTERM


@pytest.fixture(scope="module")
def flags(tmp_path_factory) -> list[str]:
    """run_pretraining.py's flags but --output_dir: records of the sample text at 64/10, a
    tiny config with dropout (its masks must resume too), a checkpoint every 10 steps."""
    folder = tmp_path_factory.mktemp("multi_worker")
    records = sample_pretraining_records(folder / "data.tfrecord")
    config = folder / "bert_config.json"
    config.write_text(json.dumps(tiny_config_dict(vocab_size=30522, hidden_dropout_prob=0.1)))
    values = dict(
        input_file=records, bert_config_file=config, max_seq_length=64,
        max_predictions_per_seq=10, do_train=True, train_batch_size=8,
        num_train_steps=STEPS, num_warmup_steps=2, learning_rate=1e-3,
        save_checkpoints_steps=10, log_steps=10, seed=1, resume_input=True,
    )  # fmt: skip
    return ["run_pretraining.py", *(f"--{name}={value}" for name, value in values.items())]


def group(flags: list[str], output_dir: Path) -> tuple[list[subprocess.Popen], list[Path]]:
    """Two workers of run_pretraining.py writing to `output_dir`; their stderr's files."""
    logs = [Path(f"{output_dir}.worker_{i}.{time.monotonic_ns()}.log") for i in range(2)]
    return start_workers([*flags, f"--output_dir={output_dir}"], logs), logs


def run_to_the_end(flags: list[str], output_dir: Path) -> None:
    workers, logs = group(flags, output_dir)
    for worker, log in zip(workers, logs, strict=True):
        assert worker.wait(timeout=600) == 0, log.read_text()[-3000:]


@pytest.fixture(scope="module")
def uninterrupted(flags, tmp_path_factory) -> Path:
    """The final checkpoint of two workers never interrupted."""
    output_dir = tmp_path_factory.mktemp("uninterrupted") / "out"
    run_to_the_end(flags, output_dir)
    return output_dir / f"ckpt-{STEPS}"


def assert_same_weights(prefix: Path, expected: Path) -> None:
    a, b = (tf.train.load_checkpoint(str(path)) for path in (expected, prefix))
    weights = [name for name in a.get_variable_to_shape_map() if "_trainable_variables/" in name]
    assert weights
    for name in weights:
        np.testing.assert_allclose(b.get_tensor(name), a.get_tensor(name), atol=1e-5, err_msg=name)


def wait_for(path: Path, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"no {path}"
        time.sleep(0.1)


def interrupted(flags, output_dir: Path, victim: int, signal_number: int):
    """Two workers, `signal_number` sent to worker `victim` once ckpt-10 is saved; each
    worker's (exit status, seconds from the signal to its exit, stderr)."""
    workers, logs = group(flags, output_dir)
    try:
        wait_for(output_dir / "ckpt-10.index")
        workers[victim].send_signal(signal_number)
        sent = time.monotonic()
        ended = []
        for worker, log in zip(workers, logs, strict=True):
            code = worker.wait(timeout=120)
            ended.append((code, time.monotonic() - sent, log.read_text()))
        return ended
    finally:
        for worker in workers:
            worker.kill()


@pytest.mark.slow  # two runs of two workers
@pytest.mark.parametrize("victim", [1, 0], ids=["kill_9_of_worker_1", "kill_9_of_the_chief"])
def test_a_worker_killed_stops_the_other_in_a_minute_and_the_restarted_group_ends_the_same(
    victim, flags, uninterrupted, tmp_path
):
    output_dir = tmp_path / "out"
    ended = interrupted(flags, output_dir, victim, signal.SIGKILL)
    code, seconds, stderr = ended[1 - victim]
    assert ended[victim][0] == -signal.SIGKILL
    assert code == RESTART_EXIT_STATUS, stderr[-3000:]
    assert seconds < 60
    assert "Traceback" not in stderr
    last = stderr.splitlines()[-1]
    found = re.fullmatch(
        rf"run_pretraining\.py: worker {1 - victim}: worker {victim} stopped answering after "
        r"step (\d+); a group of workers cannot go on without one\. The last complete "
        rf"checkpoint is {re.escape(str(output_dir))}/ckpt-(\d+): start every worker again with "
        r"the same flags to resume from it",
        last,
    )
    assert found, last
    assert int(found.group(2)) >= 10 and (output_dir / f"ckpt-{found.group(2)}.index").exists()
    assert int(found.group(1)) < STEPS  # it was cut short

    run_to_the_end(flags, output_dir)
    assert_same_weights(output_dir / f"ckpt-{STEPS}", uninterrupted)
    assert not list(output_dir.glob("workertemp_*"))  # the worker's scratch: removed at exit


@pytest.mark.slow  # two runs of two workers
def test_sigterm_to_one_worker_stops_both_at_one_saved_step_and_the_restart_ends_the_same(
    flags, uninterrupted, tmp_path
):
    output_dir = tmp_path / "out"
    ended = interrupted(flags, output_dir, 1, signal.SIGTERM)
    steps = []
    for code, seconds, stderr in ended:
        assert code == PREEMPTED, stderr[-3000:]
        assert seconds < 30
        last = stderr.splitlines()[-1]
        found = re.search(r"at step (\d+); saved (\S+); start every worker again", last)
        assert found, last
        steps.append(int(found.group(1)))
        # The chief's checkpoint, on every worker (not a worker's scratch copy).
        assert found.group(2) == f"{output_dir}/ckpt-{found.group(1)}"
    assert steps[0] == steps[1] < STEPS
    assert (output_dir / f"ckpt-{steps[0]}.index").exists()
    assert "stopped by SIGTERM" in ended[1][2].splitlines()[-1]
    assert "stopped by a stop signal to another worker" in ended[0][2].splitlines()[-1]

    run_to_the_end(flags, output_dir)
    assert_same_weights(output_dir / f"ckpt-{STEPS}", uninterrupted)


@pytest.mark.slow  # three runs of two workers; the default suite runs the launcher to success
# (test_run_pretraining.py) and its rule of restarts (below)
def test_the_launcher_starts_the_group_again_after_a_kill_9_and_ends_as_an_uninterrupted_run(
    flags, uninterrupted, tmp_path
):
    output_dir = tmp_path / "out"
    launcher = subprocess.Popen(
        [sys.executable, "scripts/local_cluster.py", "--num_workers=2", "--max_restarts=1",
         "--", *flags, f"--output_dir={output_dir}"],
        cwd=REPO, env=SCRIPT_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines = []
    try:
        for line in launcher.stderr:
            lines.append(line)
            found = re.search(r"started worker 1 \(pid (\d+)\)", line)
            if found:
                wait_for(output_dir / "ckpt-10.index")
                os.kill(int(found.group(1)), signal.SIGKILL)
                break
        lines += launcher.stderr.readlines()
        launcher.wait(timeout=600)
    finally:
        launcher.kill()
    stderr = "".join(lines)
    assert launcher.returncode == 0, stderr[-3000:]
    assert "worker 1 was killed by SIGKILL: starting the group again (restart 1 of at most 1)" in (
        stderr
    )
    chief = [line for line in lines if line.startswith("[worker 0] ")]
    assert "[worker 0] run_pretraining.py: worker 0: worker 1 stopped answering" in stderr, "".join(
        chief[-30:]
    )
    assert stderr.count("started worker 1 (pid") == 2
    assert (output_dir / "pretrained" / "bert_model.ckpt.index").exists()
    assert_same_weights(output_dir / f"ckpt-{STEPS}", uninterrupted)


@pytest.mark.parametrize(
    "message, lost",
    [
        # TensorFlow 2.21's messages, as a survivor received them (the chief, then worker 1).
        (
            "Collective ops is aborted by: Error reported from /job:worker/task:1: The following "
            "tasks are unhealthy (stopped sending heartbeats):\n/job:worker/replica:0/task:1\n"
            "The tasks have crashed.",
            "worker 1",
        ),
        (
            "Collective ops is aborted by: recvmsg:Connection reset by peer\nAdditional GRPC "
            "error information from remote target /job:worker/replica:0/task:0 while calling "
            "/tensorflow.WorkerService/CompleteInstance",
            "worker 0",
        ),
        ("Collective ops is aborted by: something else", "another worker"),
    ],
)
def test_a_lost_peer_is_named_from_tensorflows_error(message, lost):
    me = "worker 0" if lost == "worker 1" else "worker 1"
    assert lost_worker(tf.errors.UnavailableError(None, None, message), me) == lost


def test_other_errors_and_one_process_lose_no_worker():
    aborted = tf.errors.UnavailableError(None, None, "Collective ops is aborted by: x")
    assert lost_worker(aborted, "") is None  # one process: no peer to lose
    for error in (
        tf.errors.UnavailableError(None, None, "gs://bucket/file: network unreachable"),
        tf.errors.DataLossError(None, None, "corrupted record at /job:worker/task:1"),
        ValueError("Collective ops is aborted"),
    ):
        assert lost_worker(error, "worker 0") is None, error


def test_a_sigterm_while_the_strategy_is_built_stops_training_at_its_first_step():
    # TensorFlow's runtime, started there, installs a SIGTERM handler that only logs it: the
    # signal is held back, recorded after, and the stop flag raised when training watches.
    before = signal.getsignal(signal.SIGTERM)
    try:
        with sigterm_held():
            # (To this thread: the scripts hold it in every thread, from their start.)
            signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
            time.sleep(0.1)  # (held: still alive)
        flag = StopFlag()
        with flag.watching():
            assert flag.requested and flag.signal_name == "SIGTERM"
            assert float(flag.variable.numpy()) == 1.0
        # After training a SIGTERM ends the process again.
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        with flag.watching():  # a later run is not stopped by that one
            assert not flag.requested
    finally:
        signal.signal(signal.SIGTERM, before)


@pytest.mark.parametrize(
    "ending, recorded",
    [
        (WorkerLost("worker 0: worker 1 stopped answering"), True),
        (Preempted("worker 0: stopped by SIGTERM at step 10"), True),
        (TrainingDiverged("the loss is nan at step 10"), False),
        (None, False),  # trained to the end
    ],
)
def test_a_sigterm_after_the_run_stopped_waits_until_its_line_is_said(ending, recorded):
    # A cluster manager stops a lost worker's survivors with SIGTERM at once, while each is on
    # its way out with the line saying how to resume: the signal must not end it first.
    before = signal.getsignal(signal.SIGTERM)
    try:
        flag = StopFlag()
        with contextlib.suppress(type(ending) if ending else ()), flag.watching():
            if ending:
                raise ending
        if recorded:
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # (else it would kill)
            signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)
            time.sleep(0.1)  # (recorded: still alive)
            with flag.watching():  # held for a next run, as one before training
                assert flag.signal_name == "SIGTERM"
        else:  # a run that ended otherwise: a SIGTERM ends the process again
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, before)


def test_the_restart_rule_is_a_lost_preempted_or_killed_worker_not_bad_input():
    assert restartable(RESTART_EXIT_STATUS) and restartable(PREEMPTED)
    assert restartable(-signal.SIGKILL)  # the OOM killer's
    assert not restartable(1) and not restartable(2)


def counting_worker(tmp_path: Path, codes: list[int]) -> list[str]:
    """A worker that appends its index to a file at each start; worker 1 then exits with the
    status of `codes` for that start (the last one's for later starts), worker 0 with 0."""
    count = tmp_path / "starts"
    code = (
        "import json, os, pathlib, sys; "
        "i = json.loads(os.environ['TF_CONFIG'])['task']['index']; "
        f"p = pathlib.Path({str(count)!r}); p.open('a').write(str(i)); "
        f"n = p.read_text().count('1'); codes = {codes!r}; "
        "sys.exit(codes[min(n, len(codes)) - 1] if i == 1 else 0)"
    )
    return [sys.executable, "-c", code]


def test_the_launcher_restarts_on_a_lost_worker_and_not_on_bad_input(tmp_path):
    # Two workers per start; the second of each start exits with the status given. Starts are
    # counted by worker 1's marks: worker 0 may be stopped by the launcher before it writes.
    def starts(folder):
        return (folder / "starts").read_text().count("1")

    (tmp_path / "a").mkdir()
    assert run_local_cluster(counting_worker(tmp_path / "a", [75, 0]), 2, max_restarts=3) == 0
    assert starts(tmp_path / "a") == 2  # restarted once, then done
    (tmp_path / "b").mkdir()
    assert run_local_cluster(counting_worker(tmp_path / "b", [1, 0]), 2, max_restarts=3) == 1
    assert starts(tmp_path / "b") == 1  # bad input: not restarted
    (tmp_path / "c").mkdir()
    assert run_local_cluster(counting_worker(tmp_path / "c", [75]), 2, max_restarts=2) == 75
    assert starts(tmp_path / "c") == 3  # the first start and 2 restarts: given up


def test_the_launchers_workers_run_multi_worker_mirrored():
    command = worker_command(["run_pretraining.py", "--do_train=true"])
    assert command == [
        sys.executable, "run_pretraining.py", "--do_train=true",
        "--distribution_strategy=multi_worker_mirrored",
    ]  # fmt: skip
    result = run_script(
        "scripts/local_cluster.py", "--", "run_pretraining.py", "--distribution_strategy=mirrored"
    )
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "local_cluster.py: error: --distribution_strategy=mirrored: the workers of a local "
        "cluster run --distribution_strategy=multi_worker_mirrored; leave the flag out or give "
        "that value"
    )
