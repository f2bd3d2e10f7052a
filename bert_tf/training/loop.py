"""The training loop shared by the scripts: one step from a batch to an optimizer update,
under any `tf.distribute` strategy, with checkpoints, summaries and progress.

One step (what the original's `model_fn` + `create_optimizer` do, made data-parallel):
1. each replica splits its part of the global batch into `gradient_accumulation_steps`
   micro-batches and sums their gradients; every loss is normalised by counts over the whole
   global batch, so the summed gradient is the one-device gradient of the original's loss;
2. gradients are all-reduced, unscaled (float16 loss scaling), clipped by their global norm
   (1.0, as the original), and applied once by the optimizer with lr(step).

The unscale and the clip are one factor on the gradients, applied inside the optimizer update,
and the update of all variables is one XLA-compiled function per device (with or without
`use_xla`): as ~10 separate TF ops per variable it was 10-27% of a step on CPUs
(benchmarks/README.md).
"""

from __future__ import annotations

import datetime
import logging
import math
import time

import tensorflow as tf

from bert_tf.training.checkpoints import TrainingCheckpoints
from bert_tf.training.distribute import lost_worker, task_name
from bert_tf.training.preemption import StopFlag
from bert_tf.training.stops import diverged, preempted, worker_lost
from bert_tf.training.summaries import format_metrics, write_summaries

logger = logging.getLogger(__name__)


# Dynamic loss scaling for float16 (as Keras's LossScaleOptimizer): start high, halve on
# overflow (and skip that update), double after this many good steps.
INITIAL_LOSS_SCALE = 2.0**15
LOSS_SCALE_GROWTH_INTERVAL = 2000

# The step's count of stop signals over all replicas (0 or more): not a metric, never logged.
STOP_REQUESTS = "stop_requests"


class Trainer:
    """Trains `model` on `objective` with `optimizer` under `strategy`.

    Create the model and optimizer under `strategy.scope()` before building the Trainer.

    Args:
        strategy: the `tf.distribute.Strategy`.
        model: outputs what `objective.sums` reads.
        objective: `counts`, `sums`, `loss` and `metrics` (see pretraining/objectives.py).
        optimizer: a Keras optimizer that does not clip (clipping is done here, globally).
        checkpoint_dir: where the training checkpoints go (`ckpt-<step>`), or None.
        chief_checkpoint_dir: where the chief saves them, on a worker that saves to scratch.
        gradient_accumulation_steps: micro-batches per replica per update.
        clip_norm: the global-norm clip of the summed gradient.
        use_xla: compile with XLA: the whole step on a single device, else the forward and
            backward pass (the all-reduce and the cross-replica update stay outside).
        loss_scaling: dynamic loss scaling (for float16 compute).
        max_checkpoints_to_keep: older training checkpoints are deleted.
        keep_checkpoint_every_n_steps: also keep a copy of every checkpoint whose step is a
            multiple of this, in checkpoint_dir/kept/ (never deleted), to evaluate or fine-tune
            the model along the way (paper Figure 5). None: none kept.
        fused_update: update all variables in one XLA function per device (needs the
            optimizer's `apply_updates`, as bert_tf's optimizers have). None: fused, except
            under TPUStrategy (which compiles the whole step anyway) and for other optimizers.
    """

    def __init__(
        self,
        strategy: tf.distribute.Strategy,
        model,
        objective,
        optimizer,
        checkpoint_dir: str | None,
        gradient_accumulation_steps: int = 1,
        clip_norm: float = 1.0,
        use_xla: bool = False,
        loss_scaling: bool = False,
        max_checkpoints_to_keep: int = 5,
        keep_checkpoint_every_n_steps: int | None = None,
        fused_update: bool | None = None,
        chief_checkpoint_dir: str | None = None,
    ) -> None:
        self.strategy, self.model, self.objective = strategy, model, objective
        self.optimizer = optimizer
        self.gradient_accumulation_steps = gradient_accumulation_steps
        self.clip_norm = clip_norm
        self.loss_scaling = loss_scaling
        self.variables = objective.trainable_variables(model)
        with strategy.scope():
            self.optimizer.build(self.variables)
            on_first = {
                "trainable": False,
                "synchronization": tf.VariableSynchronization.ON_WRITE,
                "aggregation": tf.VariableAggregation.ONLY_FIRST_REPLICA,
            }
            self.loss_scale = tf.Variable(INITIAL_LOSS_SCALE, name="loss_scale", **on_first)
            self.good_steps = tf.Variable(0, dtype=tf.int64, name="good_steps", **on_first)
            self.stop_flag = StopFlag()
        self._gradients = tf.function(self._gradients_of, jit_compile=use_xla)
        if fused_update is None:
            fused_update = hasattr(optimizer, "apply_updates") and not isinstance(
                strategy, tf.distribute.TPUStrategy
            )
        self.fused_update = fused_update
        self._update_copies = tf.function(self._update_copies_of, jit_compile=True)
        # One device: nothing between the gradients and the update needs the runtime, so XLA
        # takes the whole step (5% faster than two compiled halves for BERT-Tiny on a CPU).
        single_device = isinstance(strategy, tf.distribute.OneDeviceStrategy) or (
            strategy is tf.distribute.get_strategy() and not tf.distribute.has_strategy()
        )
        self._step = (
            tf.function(self._replica_step, jit_compile=True)
            if use_xla and single_device
            else self._replica_step
        )
        # Dropout's seed generators: Keras's `variables` beyond the `weights`.
        weights = {id(variable) for variable in model.weights}
        random_state = [v for v in model.variables if id(v) not in weights]
        self.checkpoints = TrainingCheckpoints(
            self._checkpointed(), checkpoint_dir, max_checkpoints_to_keep,
            keep_checkpoint_every_n_steps, random_state, chief_checkpoint_dir,
        )  # fmt: skip

    def _checkpointed(self) -> dict:
        """What a training checkpoint holds, by name."""
        state = {"model": self.model, "optimizer": self.optimizer}
        if hasattr(self.model, "encoder"):
            # Also under its own name, so that a fine-tuning model can restore just the encoder.
            state["encoder"] = self.model.encoder
        return state | {"loss_scale": self.loss_scale, "good_steps": self.good_steps}

    @property
    def global_step(self) -> int:
        return int(self.optimizer.iterations.numpy())

    # One step, per replica. -------------------------------------------------------------

    def _gradients_of(self, features: dict, counts: dict, scale):
        with tf.GradientTape() as tape:
            outputs = self.model(self.objective.model_inputs(features), training=True)
            sums = self.objective.sums(outputs, features)
            loss = self.objective.loss(sums, counts) * scale
        gradients = tape.gradient(loss, self.variables)
        # Embedding lookups give IndexedSlices; the tied MLM decoder adds a dense part anyway.
        gradients = [tf.convert_to_tensor(g) for g in gradients]
        return gradients, sums

    def _replica_step(self, features: dict) -> dict:
        context = tf.distribute.get_replica_context()
        features = self.objective.prepare(features)
        counts = context.all_reduce(tf.distribute.ReduceOp.SUM, self.objective.counts(features))
        scale = self.loss_scale.read_value() if self.loss_scaling else tf.constant(1.0)

        steps = self.gradient_accumulation_steps
        if steps == 1:
            gradients, sums = self._gradients(features, counts, scale)
        else:
            # [B, ...] -> [steps, B / steps, ...]: micro-batch i is micro[name][i].
            micro = {
                name: tf.reshape(value, tf.concat([[steps, -1], tf.shape(value)[1:]], 0))
                for name, value in features.items()
            }
            gradients = [tf.zeros_like(v) for v in self.variables]
            sums = {name: tf.constant(0.0) for name in self.objective.sum_names}
            for i in tf.range(steps):
                g, s = self._gradients(
                    {name: value[i] for name, value in micro.items()}, counts, scale
                )
                gradients = [a + b for a, b in zip(gradients, g, strict=True)]
                sums = {name: sums[name] + s[name] for name in sums}

        # A stop signal on any worker stops all after this step (one all-reduce with the rest).
        stop = self.stop_flag.variable.read_value()
        gradients, sums, stop = context.all_reduce(
            tf.distribute.ReduceOp.SUM, (gradients, sums, stop)
        )
        gradient_norm = tf.linalg.global_norm(gradients) / scale
        # An overflowing (float16) or diverged gradient has an infinite or NaN norm; so has a
        # finite one whose squares overflow, which the clip would turn into NaN anyway.
        finite = tf.math.is_finite(gradient_norm)
        # Unscale, then clip by the global norm as tf.clip_by_global_norm: one factor.
        factor = self.clip_norm / tf.maximum(gradient_norm, self.clip_norm) / scale
        learning_rate = self.optimizer.learning_rate  # lr(step), read before the update
        context.merge_call(self._apply, args=(gradients, factor, finite))

        metrics = dict(self.objective.metrics(sums, counts))
        metrics["gradient_norm"] = gradient_norm
        metrics["learning_rate"] = tf.cast(learning_rate, tf.float32)
        metrics["loss_scale"] = scale
        metrics[STOP_REQUESTS] = stop
        return metrics

    def _apply(self, strategy, gradients, factor, finite) -> None:
        """Cross-replica: one optimizer update with lr(step) of `gradients * factor`
        (skipped on float16 overflow).

        The gradients are already all-reduced, so this updates each device's copies of the
        variables directly rather than through `optimizer.apply` (which would all-reduce
        again, and clip per replica).
        """
        optimizer = self.optimizer

        def update():
            learning_rate = optimizer.learning_rate
            if self.fused_update:
                self._update_all_copies(strategy, gradients, factor, learning_rate)
            else:
                for gradient, variable in zip(gradients, self.variables, strict=True):
                    strategy.extended.update(
                        _tf_variable(variable),
                        lambda var, grad, factor: optimizer.update_step(
                            grad * factor, var, learning_rate
                        ),
                        args=(gradient, factor),
                        group=False,
                    )
            optimizer.iterations.assign_add(1)
            return tf.constant(True)

        # A non-finite gradient is never applied: in float16 an overflow (the loss scale is
        # halved and the step tried again), else a divergence (the host loop stops).
        finite = strategy.experimental_local_results(finite)[0]
        tf.cond(finite, update, lambda: tf.constant(False))
        if not self.loss_scaling:
            return
        grow = finite & (self.good_steps + 1 >= LOSS_SCALE_GROWTH_INTERVAL)
        halved = tf.maximum(self.loss_scale / 2.0, 1.0)
        self.loss_scale.assign(
            tf.where(finite, tf.where(grow, self.loss_scale * 2.0, self.loss_scale), halved)
        )
        self.good_steps.assign(tf.where(finite & ~grow, self.good_steps + 1, 0))

    def _update_all_copies(self, strategy, gradients, factor, learning_rate) -> None:
        """Runs `_update_copies` on each local device, on that device's copies."""
        local = strategy.experimental_local_results

        def copies(values):  # [value][device] -> [device][value]
            return list(zip(*[local(_tf_variable(value)) for value in values], strict=True))

        slots = [copies(slot) for slot in self.optimizer.slot_variables()]
        iterations = tf.convert_to_tensor(self.optimizer.iterations)
        for device, (variables, gradients_here, factor_here) in enumerate(
            zip(copies(self.variables), copies(gradients), local(factor), strict=True)
        ):
            with tf.device(variables[0].device):
                self._update_copies(
                    list(variables),
                    list(gradients_here),
                    tuple(list(slot[device]) for slot in slots),
                    factor_here,
                    learning_rate,
                    iterations,
                )

    def _update_copies_of(self, variables, gradients, slots, factor, learning_rate, iterations):
        # One device's copies: the scaling fuses into the optimizer's elementwise update.
        gradients = [g * factor for g in gradients]
        self.optimizer.apply_updates(variables, gradients, slots, learning_rate, iterations)

    def distribute(self, dataset: tf.data.Dataset):
        """An iterator of per-replica batches: each global batch of `dataset` is split."""
        return iter(self.strategy.experimental_distribute_dataset(dataset))

    def run_steps(self, iterator, num_steps: int) -> tuple[dict, dict]:
        """Up to `num_steps` training steps; stops after a step whose loss is not finite.
        Returns the metrics averaged over the steps run and those of the last step."""
        averages, last = self._train_loop(iterator, tf.constant(num_steps))
        return (
            {name: float(value) for name, value in averages.items()},
            {name: float(value) for name, value in last.items()},
        )

    @tf.function
    def _train_loop(self, iterator, num_steps):
        first = self._local(self.strategy.run(self._step, args=(next(iterator),)))
        totals, last, count = dict(first), first, tf.constant(1)
        for _ in tf.range(num_steps - 1):
            if self._diverged(last) or last[STOP_REQUESTS] > 0:
                break
            last = self._local(self.strategy.run(self._step, args=(next(iterator),)))
            totals = {name: totals[name] + last[name] for name in totals}
            count += 1
        averages = {name: value / tf.cast(count, tf.float32) for name, value in totals.items()}
        return averages, last

    def _diverged(self, metrics: dict):
        """Whether a step's loss, or its gradient (but a float16 overflow, which the loss scale
        handles), is not finite. Works on Python floats and on tensors in the graph."""
        finite = math.isfinite if isinstance(metrics["loss"], float) else tf.math.is_finite
        if self.loss_scaling:
            return not finite(metrics["loss"])
        return not finite(metrics["loss"]) or not finite(metrics["gradient_norm"])

    def _local(self, values: dict) -> dict:
        # After the all-reduce every replica holds the same values: take the first.
        return {
            name: self.strategy.experimental_local_results(value)[0]
            for name, value in values.items()
        }

    # The host loop. ---------------------------------------------------------------------

    def train(
        self,
        dataset: tf.data.Dataset,
        num_train_steps: int,
        global_batch_size: int,
        steps_per_loop: int = 1000,
        save_checkpoints_steps: int = 1000,
        log_steps: int = 100,
        summary_writer=None,
    ) -> dict:
        """Trains until the global step reaches `num_train_steps`; returns the last metrics.

        Logs every `log_steps` (loss, accuracies, learning rate, steps/s, sequences/s, ETA),
        writes them as summaries, and saves a checkpoint every `save_checkpoints_steps` and
        at the end.

        A stop signal (SIGTERM, `preemption.STOP_SIGNALS`) ends the run after the step under
        way, on every worker: that step's checkpoint is saved and `Preempted` raised.

        A lost worker (multi-worker training: killed, or its machine gone) aborts every
        survivor's collectives within TensorFlow's heartbeat timeout: `WorkerLost` is raised,
        naming it and the last complete checkpoint.

        Raises:
            TrainingDiverged: the loss became NaN or infinite (no checkpoint of it is saved).
            Preempted: a stop signal came; the checkpoint of the step reached is saved.
            WorkerLost: another worker stopped answering; start the whole group again.
        """
        with self.stop_flag.watching():
            try:
                return self._train(
                    dataset, num_train_steps, global_batch_size, steps_per_loop,
                    save_checkpoints_steps, log_steps, summary_writer,
                )  # fmt: skip
            except Exception as e:
                lost = lost_worker(e, task_name(self.strategy))
                if lost is None:
                    raise
                raise worker_lost(self, lost) from None

    def _train(
        self,
        dataset,
        num_train_steps,
        global_batch_size,
        steps_per_loop,
        save_checkpoints_steps,
        log_steps,
        summary_writer,
    ) -> dict:
        iterator = self.distribute(dataset)
        step = start = self.global_step
        started = last_log = time.monotonic()
        last_log_step = step
        metrics: dict = {}
        while step < num_train_steps:
            events = [num_train_steps, step + steps_per_loop]
            events += [(step // every + 1) * every for every in (log_steps, save_checkpoints_steps)]
            averages, last = self.run_steps(iterator, min(events) - step)
            step = self.global_step
            averages["learning_rate"] = last["learning_rate"]
            averages["loss_scale"] = last["loss_scale"]
            averages.pop(STOP_REQUESTS)
            # Only the step's all-reduced count: every worker reads the same (a signal that
            # came after this step read the flag stops all at the next one, not this worker).
            stopped = last.pop(STOP_REQUESTS) > 0
            if self._diverged(last):
                raise diverged(self, last, step)
            metrics = averages
            if step % log_steps == 0 or step >= num_train_steps:
                now = time.monotonic()
                rate = (step - last_log_step) / max(now - last_log, 1e-9)
                overall = (step - start) / max(now - started, 1e-9)
                metrics["steps_per_second"] = rate
                metrics["sequences_per_second"] = rate * global_batch_size
                eta = datetime.timedelta(
                    seconds=round((num_train_steps - step) / max(overall, 1e-9))
                )
                logger.info(
                    "step %d/%d: %s, ETA %s", step, num_train_steps, format_metrics(metrics), eta
                )
                last_log, last_log_step = now, step
                write_summaries(summary_writer, metrics, step)
            if step % save_checkpoints_steps == 0 or step >= num_train_steps or stopped:
                path = self.checkpoints.save(step)
                if path and self.checkpoints.directory == self.checkpoints.chief_directory:
                    logger.info("saved %s", path)  # (not a worker's scratch copy)
            if stopped:
                raise preempted(self, step)
        return metrics


def _tf_variable(variable):
    """The tf.Variable (under a strategy: the distributed variable) behind a Keras one."""
    return getattr(variable, "value", variable)
