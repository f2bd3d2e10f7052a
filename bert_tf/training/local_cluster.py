"""A multi-worker group on one machine: N local workers of a training script, each given its
TF_CONFIG on free ports, and the whole group started again where one is lost, as a cluster
manager does on real machines (Kubernetes' restart policy, a TPU VM's restart, `torchrun
--max-restarts`: TensorFlow's collectives are not elastic, a group that lost a member restarts
whole from the last checkpoint).

    code = run_local_cluster(["run_pretraining.py", "--output_dir=out", ...], num_workers=2)

The restart rule, the same as for a cluster manager: a worker that exits with 75 (another
worker was lost), 143 (stopped by SIGTERM, its step saved) or ended by a signal (kill -9, the
OOM killer) makes the group start again, with fresh ports, up to `max_restarts` times; 0 from
every worker is done; any other status (1: bad input, a bug) ends the group with that status.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from bert_tf.cli import flag_value
from bert_tf.errors import RESTART_EXIT_STATUS, SIGNAL_EXIT_STATUS_BASE, InputError

logger = logging.getLogger(__name__)

STRATEGY_FLAG = "--distribution_strategy=multi_worker_mirrored"
# The statuses after which the group starts again: a lost worker, a preempted one.
RESTART_STATUSES = (RESTART_EXIT_STATUS, SIGNAL_EXIT_STATUS_BASE + signal.SIGTERM)
# How long the other workers get to stop (and save) after one failed, before kill -9.
STOP_GRACE_SECONDS = 60


def worker_command(command: list[str]) -> list[str]:
    """`command` as each worker runs it: a .py script under this Python, with
    --distribution_strategy=multi_worker_mirrored (added where the command leaves it out).

    Raises:
        InputError: no command, or one asking for another strategy."""
    if not command:
        raise InputError("no command given: expected -- SCRIPT.py FLAGS after the launcher's flags")
    strategy = flag_value(command[1:], "distribution_strategy")
    if strategy not in (None, "multi_worker_mirrored"):
        raise InputError(
            f"--distribution_strategy={strategy}: the workers of a local cluster run "
            f"{STRATEGY_FLAG}; leave the flag out or give that value"
        )
    command = [*command] if strategy else [*command, STRATEGY_FLAG]
    return [sys.executable, *command] if command[0].endswith(".py") else command


def free_ports(count: int) -> list[int]:
    """`count` distinct ports free on this machine now (all bound at once, then released)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def tf_config(ports: list[int], index: int) -> str:
    """Worker `index`'s TF_CONFIG in a cluster of local workers on `ports` (worker 0 is the
    chief: it writes the checkpoints and outputs)."""
    workers = [f"127.0.0.1:{port}" for port in ports]
    return json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}})


def describe_exit(index: int, code: int) -> str:
    """A worker's exit in words: "worker 1 exited with status 75", "worker 1 was killed by
    SIGKILL"."""
    if code < 0:
        return f"worker {index} was killed by {signal.Signals(-code).name}"
    return f"worker {index} exited with status {code}"


def exit_status(code: int) -> int:
    """A Popen return code as a shell's exit status (a signal's: 128 + its number)."""
    return SIGNAL_EXIT_STATUS_BASE - code if code < 0 else code


def restartable(code: int) -> bool:
    """Whether a worker's exit asks for the group to start again (the module's rule)."""
    return code < 0 or code in RESTART_STATUSES


def run_local_cluster(command: list[str], num_workers: int, max_restarts: int = 3) -> int:
    """Runs `command` as `num_workers` local workers until they all finish, starting the
    group again where one is lost (`restartable`), at most `max_restarts` times; returns the
    exit status (0: done). A SIGTERM or Ctrl-C to this process is passed to the workers
    (each saves its step and stops) and ends it without a restart."""
    command = worker_command(command)
    stop = _ForwardedStop()
    with stop.forwarding():
        for attempt in range(max_restarts + 1):
            code, index = _run_group(command, num_workers, stop)
            if code == 0:
                return 0
            said = describe_exit(index, code)
            if stop.signal_number:
                logger.warning("%s after this launcher's stop; not restarting", said)
                return exit_status(code)
            if not restartable(code):
                logger.error("%s: not a lost or preempted worker; not restarting", said)
                return exit_status(code)
            if attempt == max_restarts:
                logger.error("%s, after %d restart(s) (--max_restarts): giving up", said, attempt)
                return exit_status(code)
            logger.warning(
                "%s: starting the group again (restart %d of at most %d)",
                said, attempt + 1, max_restarts,
            )  # fmt: skip
    return 1  # (not reached)


class _ForwardedStop:
    """Passes a SIGTERM or SIGINT this process receives to the workers running."""

    def __init__(self) -> None:
        self.signal_number: int | None = None
        self.workers: list[subprocess.Popen] = []

    @contextlib.contextmanager
    def forwarding(self):
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        numbers = (signal.SIGTERM, signal.SIGINT)
        previous = {number: signal.signal(number, self._forward) for number in numbers}
        try:
            yield
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    def _forward(self, number, frame) -> None:
        del frame
        self.signal_number = number
        for worker in self.workers:
            if worker.poll() is None:
                worker.send_signal(number)


def _run_group(command, num_workers, stop: _ForwardedStop) -> tuple[int, int]:
    """One start of the group, to the end; (the first failing worker's code, its index), or
    (0, -1) where every worker finished."""
    ports = free_ports(num_workers)
    workers = []
    for index in range(num_workers):
        env = {**os.environ, "TF_CONFIG": tf_config(ports, index)}
        worker = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        threading.Thread(target=_relay, args=(worker, index), daemon=True).start()
        logger.info("started worker %d (pid %d) on port %d", index, worker.pid, ports[index])
        workers.append(worker)
    stop.workers = workers
    failed = None
    while any(worker.poll() is None for worker in workers):
        failed = failed or _first_failure(workers)
        if failed:
            break
        time.sleep(0.2)
    failed = failed or _first_failure(workers)
    if failed:
        _stop_others(workers)
        return failed
    return 0, -1


def _first_failure(workers) -> tuple[int, int] | None:
    for index, worker in enumerate(workers):
        code = worker.poll()
        if code not in (None, 0):
            return code, index
    return None


def _stop_others(workers) -> None:
    """SIGTERM to the workers still running (each saves its step where it can), kill -9 to
    those still running after the grace period."""
    for worker in workers:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for worker in workers:
        try:
            worker.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def _relay(worker: subprocess.Popen, index: int) -> None:
    """The worker's output, each line marked with its index, on this process's stderr."""
    for line in worker.stdout:
        sys.stderr.write(f"[worker {index}] {line}")
