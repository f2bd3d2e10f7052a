"""How a training run ends before its last step, each as one line that says what to do next: the
loss diverged (`TrainingDiverged`), a stop signal came (`Preempted`: the step reached is
saved), or another worker was lost (`WorkerLost`: start the group again). `trainer`: the
`loop.Trainer` that stopped."""

from __future__ import annotations

import math
import signal

import tensorflow as tf

from bert_tf.errors import Preempted, TrainingDiverged, WorkerLost
from bert_tf.training.distribute import task_name


def diverged(trainer, last: dict, step: int) -> TrainingDiverged:
    """The loss or the gradient norm of `last` (a step's metrics) is not finite."""
    what = "loss" if not math.isfinite(last["loss"]) else "gradient norm"
    kept = trainer.checkpoints.latest
    return TrainingDiverged(
        f"the {what} is {last[what.replace(' ', '_')]} at step {step}; stopped (that "
        "step's update was not applied). The last good checkpoint is "
        f"{kept or 'none (none was saved yet)'}"
    )


def worker_lost(trainer, lost: str) -> WorkerLost:
    """Another worker (`lost`) stopped answering: the whole group starts again."""
    try:
        step = f"step {trainer.global_step}"  # this worker's own copy: readable still
    except tf.errors.OpError:
        step = "a step"
    kept = trainer.checkpoints.last_complete()
    return WorkerLost(
        f"{task_name(trainer.strategy)}: {lost} stopped answering after {step}; a group of "
        "workers cannot go on without one. The last complete checkpoint is "
        f"{kept or 'none (none was saved yet)'}: start every worker again with the same "
        "flags to resume from it"
    )


def preempted(trainer, step: int) -> Preempted:
    """A stop signal came: the checkpoint of `step` is saved; the same command resumes."""
    name = trainer.stop_flag.signal_name
    reason = {"SIGINT": "Ctrl-C (SIGINT)"}.get(name, name)
    worker = task_name(trainer.strategy)  # "" on one process
    if worker:
        again = "start every worker again with the same flags"
    else:
        again = "run the same command again"
    return Preempted(
        f"{worker + ': ' if worker else ''}stopped by "
        f"{reason or 'a stop signal to another worker'} at step {step}; saved "
        f"{trainer.checkpoints.latest or 'nothing'}; {again} to resume from it",
        signal.Signals[name] if name else signal.SIGTERM,
    )
