"""A termination notice (or Ctrl-C) turned into a stop at the next training step.

SIGTERM is what preemptible VMs, TPU maintenance, Kubernetes and Slurm send some seconds before
they kill a process; SIGINT is a user's Ctrl-C, answered the same way. `StopFlag.watching()`
catches it and sets a variable that the training step reads and all-reduces, so every replica
and worker stops after the same step; the trainer then saves that step's checkpoint and raises
`Preempted`.

Why a thread: Python runs a signal handler only between bytecodes, not while a loop of steps
runs in the graph. The handler's C part writes the signal number to a wakeup socket at once; a
thread reading that socket sets the variable, and the loop stops at its next step.

Before training watches: building a multi-worker strategy starts TensorFlow's runtime, which
installs a SIGTERM handler of its own that only logs the signal (the process then trains on, as
if never told). `sigterm_held()` around that build holds a SIGTERM back and records it after, and
`StopFlag.watching()` turns a recorded one into a stop at the first step: every worker stops at
that same step, saved. After a run that stopped (`Preempted`, `WorkerLost`), a SIGTERM is recorded
the same way: the process is on its way out, and says its line first.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading

import tensorflow as tf

from bert_tf.errors import Preempted, WorkerLost

# The signals that ask a training run to stop: the notice before a kill, and Ctrl-C.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

# The stop signals that came between `sigterm_held()` and `StopFlag.watching()`.
_recorded: list[int] = []


def _record(number, frame) -> None:
    del frame
    _recorded.append(number)


@contextlib.contextmanager
def sigterm_held():
    """Within the block, SIGTERM waits (TensorFlow's runtime, started there, installs a handler
    that would only log it); after it, a SIGTERM is recorded until `StopFlag.watching()` acts
    on it. Outside the main thread it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
            signal.signal(signal.SIGTERM, _record)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, held)  # one held back is recorded now


class StopFlag:
    """A variable the training step reads, 1.0 once a stop signal arrived, else 0.0 (float32:
    a type every device's variables take, and the all-reduce sums it with the gradients).

    Create it where the trainer's variables are created (under the strategy's scope, so each
    device reads its own copy)."""

    def __init__(self) -> None:
        self.variable = tf.Variable(
            0.0,
            trainable=False,
            name="stop_requested",
            synchronization=tf.VariableSynchronization.ON_WRITE,
            aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
        )
        self.signal_name: str | None = None

    @contextlib.contextmanager
    def watching(self, signals=STOP_SIGNALS):
        """Within the block, a signal of `signals` sets the flag instead of ending the
        process; after it, a SIGTERM ends the process again, unless the block ended the run
        (`Preempted`, `WorkerLost`): then it is recorded, for a next run's first step. Outside
        the main thread (where Python cannot take signals) it does nothing."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        self.variable.assign(0.0)
        self.signal_name = None  # a new run: an earlier stop is not this one's
        if _recorded:  # came before this watch: stop at the first step
            self._note(_recorded.pop(), None)
        reader, writer = socket.socketpair()
        writer.setblocking(False)
        # A signal the process was started to ignore (SIGINT in a shell's background job)
        # stays ignored.
        signals = [n for n in signals if signal.getsignal(n) is not signal.SIG_IGN]
        previous = {number: signal.signal(number, self._note) for number in signals}
        previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        watcher = threading.Thread(
            target=self._watch, args=(reader, set(signals)), name="stop-signal", daemon=True
        )
        watcher.start()
        stopping = False
        try:
            yield self
        except (Preempted, WorkerLost):
            stopping = True
            raise
        finally:
            signal.set_wakeup_fd(previous_fd)
            for number, handler in previous.items():
                if number == signal.SIGTERM and stopping:
                    # The run is stopping, its line not yet said: a SIGTERM now (a cluster
                    # manager stopping the survivors of a lost worker) asks for what is under
                    # way; recorded, as one before training, it cannot kill the process first.
                    handler = _record
                elif handler is _record:
                    handler = signal.SIG_DFL  # after training a SIGTERM ends the process again
                signal.signal(number, handler)
            writer.close()  # the watcher reads the end of the stream and returns
            watcher.join()
            reader.close()

    @property
    def requested(self) -> bool:
        return self.signal_name is not None

    def _note(self, number, frame) -> None:
        # Runs in the main thread once the graph returns; the watcher has set the variable.
        del frame
        self.signal_name = signal.Signals(number).name
        self.variable.assign(1.0)

    def _watch(self, reader: socket.socket, numbers: set) -> None:
        while data := reader.recv(64):
            if any(number in numbers for number in data):
                self.variable.assign(1.0)
