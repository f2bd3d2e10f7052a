"""The trainer set-up that pre-training and fine-tuning share around the training loop: batches
checked against the replicas, seed and dtype policy, the model and the original's optimizer
under the strategy, resumed from output_dir or started from --init_checkpoint
(`training.initialization`); then `train`, with TensorBoard scalars."""

from __future__ import annotations

import atexit
import contextlib
import gc
import logging
import os

import keras
import tensorflow as tf

from bert_tf.config import BertConfig
from bert_tf.errors import InputError, first_line
from bert_tf.io import filesystem
from bert_tf.model_io.checkpoints import training_checkpoints
from bert_tf.model_io.source import ModelSource
from bert_tf.optimization import create_optimizer
from bert_tf.training.distribute import check_batch, is_chief, task_name, warn_if_slow
from bert_tf.training.initialization import initialize
from bert_tf.training.loop import Trainer
from bert_tf.training.objective import Objective
from bert_tf.training.options import TrainerSettings
from bert_tf.training.summaries import summary_writer

logger = logging.getLogger(__name__)


def build_trainer(
    strategy: tf.distribute.Strategy,
    objective: Objective,
    config: BertConfig,
    num_train_steps: int,
    num_warmup_steps: int,
    settings: TrainerSettings,
    source: ModelSource | None = None,
    labels: list[str] | None = None,
) -> Trainer:
    """The objective's model under `strategy`, in a `Trainer` with the original's optimizer
    (settings.learning_rate, the steps given); restored from the latest checkpoint in
    settings.output_dir (a rerun resumes), else from settings.init_checkpoint (`initialize`;
    `source`: its `ModelSource`, where already resolved; `labels`: the task's, if any).

    Raises:
        InputError: a batch that does not split evenly, or a checkpoint that does not fit.
    """
    trainer = _new_trainer(strategy, objective, config, num_train_steps, num_warmup_steps, settings)
    model = trainer.model
    try:
        resumed = trainer.checkpoints.restore(
            settings.output_dir
        )  # every worker the chief's checkpoint
    except (ValueError, AssertionError) as e:  # the checkpoint of another architecture
        mismatch = first_line(e)
    else:
        mismatch = None
    if mismatch:
        # The failed restore's objects warn of "unrestored values" when freed: freed here,
        # quietly, so that the one line below is the last the user sees.
        with quiet_logger("tensorflow"):
            del trainer, model
            gc.collect()
        latest = os.path.basename(training_checkpoints(settings.output_dir)[-1])
        raise InputError(
            f"--output_dir={settings.output_dir}: its checkpoint {latest} does not fit the "
            f"model built from --bert_config_file ({mismatch}); it holds another model: give "
            "another --output_dir, or the config it was trained with"
        )
    if resumed:
        logger.info("restored %s (step %d)", resumed, trainer.global_step)
        return trainer
    if not (settings.do_train or settings.init_checkpoint):
        raise InputError(
            f"--output_dir={settings.output_dir} holds no checkpoint and no --init_checkpoint "
            "is given: there is no trained model to evaluate, predict with or export"
        )
    if settings.init_checkpoint:
        initialize(model, source or ModelSource(settings.init_checkpoint), settings, labels)
    return trainer


def _new_trainer(
    strategy, objective, config, num_train_steps, num_warmup_steps, settings: TrainerSettings
) -> Trainer:
    """The objective's model and the original's optimizer under `strategy`, in a `Trainer`
    that saves to settings.output_dir (on the chief), not yet restored."""
    warn_if_slow(strategy, settings.dtype, settings.use_xla)
    _check_batches(strategy, settings)
    if settings.seed is not None:
        keras.utils.set_random_seed(settings.seed)
    keras.config.set_dtype_policy(settings.dtype)
    with strategy.scope():
        return Trainer(
            strategy,
            objective.build_model(config),
            objective,
            create_optimizer(
                settings.learning_rate,
                max(num_train_steps, 1),
                num_warmup_steps,
                settings.optimizer,
            ),
            gradient_accumulation_steps=settings.gradient_accumulation_steps,
            use_xla=settings.use_xla,
            loss_scaling=settings.dtype == "mixed_float16",
            **checkpoint_settings(settings, "" if is_chief(strategy) else task_name(strategy)),
        )


@contextlib.contextmanager
def quiet_logger(name: str, level: int = logging.ERROR):
    """Within the block, the logger `name` drops records below `level`."""
    logger_ = logging.getLogger(name)
    previous = logger_.level
    logger_.setLevel(level)
    try:
        yield
    finally:
        logger_.setLevel(previous)


def checkpoint_settings(settings: TrainerSettings, worker: str = "") -> dict:
    """Where this worker saves, and what it keeps: the chief (`worker` ""), in output_dir, as
    the settings say; another worker ("worker 1") takes part in each (collective) save but
    writes to its scratch folder, output_dir/workertemp_worker_1 (Keras's and Orbit's
    `workertemp_` convention), keeping only its last checkpoint and no kept copies. The
    scratch is removed at exit, and at the next start where a kill left it."""
    if not worker:
        filesystem.makedirs(settings.output_dir)
        return {
            "checkpoint_dir": settings.output_dir,
            "max_checkpoints_to_keep": settings.keep_checkpoint_max,
            "keep_checkpoint_every_n_steps": settings.keep_checkpoint_every_n_steps,
        }
    scratch = os.path.join(settings.output_dir, WORKER_SCRATCH + worker.replace(" ", "_"))
    if filesystem.isdir(scratch):
        filesystem.rmtree(scratch)
    atexit.register(_remove_quietly, scratch)
    return {
        "checkpoint_dir": scratch,
        "chief_checkpoint_dir": settings.output_dir,
        "max_checkpoints_to_keep": 1,
    }


# The start of a non-chief worker's scratch folder's name in output_dir.
WORKER_SCRATCH = "workertemp_"


def _remove_quietly(folder: str) -> None:
    with contextlib.suppress(Exception):
        if filesystem.isdir(folder):
            filesystem.rmtree(folder)


def _check_batches(strategy: tf.distribute.Strategy, settings: TrainerSettings) -> None:
    """Every batch size is a global batch: it must split into the replicas (the train batch
    also into the accumulation steps)."""
    for name, batch_size in settings.batch_sizes.items():
        accumulation = settings.gradient_accumulation_steps if name == "train_batch_size" else 1
        check_batch(name, batch_size, strategy.num_replicas_in_sync, accumulation)


def train(trainer: Trainer, settings: TrainerSettings, dataset, num_train_steps: int) -> None:
    """Trains on `dataset` to `num_train_steps` as the settings say (batch, steps per loop,
    checkpoints, logging), with TensorBoard scalars in output_dir/train on the chief."""
    with summary_writer(trainer.strategy, settings.output_dir, "train") as writer:
        trainer.train(
            dataset,
            num_train_steps=num_train_steps,
            global_batch_size=settings.batch_sizes["train_batch_size"],
            steps_per_loop=settings.iterations_per_loop,
            save_checkpoints_steps=settings.save_checkpoints_steps,
            log_steps=settings.log_steps,
            summary_writer=writer,
        )
