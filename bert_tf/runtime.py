"""What pre-training and fine-tuning share around the training loop: the options every training
script takes (the original's TPU flags, ours for distribution, precision, XLA and
checkpoints), and the trainer set-up: batches checked against the replicas, seed and dtype
policy, the model and the original's optimizer under the strategy, resumed from output_dir or
started from --init_checkpoint.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import gc
import logging
import os

import keras
import tensorflow as tf

from bert_tf import filesystem
from bert_tf.config import BertConfig
from bert_tf.distribute import (
    DistributionOptions,
    check_batch,
    is_chief,
    task_name,
    warn_if_slow,
)
from bert_tf.errors import InputError, first_line
from bert_tf.model_io.checkpoints import training_checkpoints
from bert_tf.model_io.loading import LoadReport, load_checkpoint
from bert_tf.model_io.source import ModelSource
from bert_tf.objective import Objective
from bert_tf.optimization import create_optimizer
from bert_tf.options import Options, greater_than_zero, one_of, option, options, positive
from bert_tf.summaries import summary_writer
from bert_tf.training import DTYPES, Trainer

logger = logging.getLogger(__name__)


@options
class TrainingOptions(DistributionOptions):
    """The original's flags that pre-training and fine-tuning share, with its defaults, and ours
    for precision, XLA, accumulation, seed, logging and checkpoint retention."""

    dtype: str = option(
        "float32",
        "Compute dtype: float32, mixed_float16 (with dynamic loss scaling) or mixed_bfloat16.",
        one_of(*DTYPES),
    )
    use_xla: bool = option(
        False,
        "Compile with XLA (the whole step on one device; else the forward and backward pass). "
        "On CPUs leave it off with mixed_bfloat16: XLA:CPU does not use the AMX bfloat16 "
        "matmuls that oneDNN uses.",
    )
    gradient_accumulation_steps: int = option(
        1,
        "Micro-batches summed per update; train_batch_size stays the batch of one update.",
        positive,
    )
    seed: int | None = option(None, "Seed of initialization, dropout and input order.")
    log_steps: int = option(100, "Log and write summaries every this many steps.", positive)
    keep_checkpoint_max: int = option(5, "How many training checkpoints to keep.", positive)

    bert_config_file: str = option(
        None,
        "The config json file corresponding to the pre-trained BERT model. This specifies the "
        "model architecture.",
        required=True,
    )
    output_dir: str = option(
        None,
        "The output directory where the model checkpoints will be written.",
        required=True,
    )
    init_checkpoint: str | None = option(
        None,
        "Initial checkpoint (usually from a pre-trained BERT model): the original format, a "
        "bert_tf checkpoint or a Hugging Face BERT directory (config.json, model.safetensors).",
    )
    max_seq_length: int = option(
        128, "The maximum total input sequence length after WordPiece tokenization.", positive
    )
    do_train: bool = option(False, "Whether to run training.")
    train_batch_size: int = option(32, "Total batch size for training.", positive)
    learning_rate: float = option(5e-5, "The initial learning rate for Adam.", greater_than_zero)
    save_checkpoints_steps: int = option(1000, "How often to save the model checkpoint.", positive)
    iterations_per_loop: int = option(
        1000, "How many steps to make in each call into the device.", positive
    )

    def trainer_settings(self, **more) -> TrainerSettings:
        """The plain values `build_trainer` and `train` take (`more`: a script's own, such as
        pre-training's optimizer); every `*_batch_size` option is a global batch to check."""
        batch_sizes = {
            field.name: getattr(self, field.name)
            for field in dataclasses.fields(self)
            if field.name.endswith("_batch_size")
        }
        names = [field.name for field in dataclasses.fields(TrainerSettings)]
        values = {name: getattr(self, name) for name in names if hasattr(self, name)}
        return TrainerSettings(**{**values, "batch_sizes": batch_sizes, **more})


@dataclasses.dataclass(frozen=True)
class TrainerSettings:
    """What `build_trainer` and `train` take: plain values (the scripts make them of their
    options, `TrainingOptions.trainer_settings`; from Python, give them directly)."""

    output_dir: str
    learning_rate: float
    batch_sizes: dict  # name -> global batch ("train_batch_size": 32, ...)
    init_checkpoint: str | None = None
    do_train: bool = True
    dtype: str = "float32"
    use_xla: bool = False
    seed: int | None = None
    gradient_accumulation_steps: int = 1
    keep_checkpoint_max: int = 5
    keep_checkpoint_every_n_steps: int | None = None
    optimizer: str = "adamw"
    iterations_per_loop: int = 1000
    save_checkpoints_steps: int = 1000
    log_steps: int = 100


@options
class EvalOptions(Options):
    """--do_eval: evaluation apart from training (and, fine-tuning, from the test set)."""

    do_eval: bool = option(False, "Whether to run eval on the dev set.")
    eval_batch_size: int = option(8, "Total batch size for eval.", positive)


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


def initialize(
    model: keras.Model,
    source: ModelSource,
    settings: TrainerSettings,
    labels: list[str] | None = None,
) -> LoadReport:
    """`model` from the init checkpoint `source`, its head too where the checkpoint holds one
    that computes the same (`head_mismatch`), else its encoder only (a warning: the head
    starts new). A model to evaluate or export without training must get its head there."""
    mismatch = head_mismatch(model, source, labels)
    if mismatch:
        logger.warning(
            "--init_checkpoint=%s %s: only its encoder is loaded, the %s head starts new",
            source.path, mismatch, type(model).__name__,
        )  # fmt: skip
    report = load_checkpoint(model, source, encoder_only=bool(mismatch))
    logger.info("initializing from %s", report.source)
    if not settings.do_train and model.head_variables() and not report.head_loaded:
        raise InputError(
            f"--init_checkpoint={settings.init_checkpoint} has no {type(model).__name__} "
            f"head, and --output_dir={settings.output_dir} no checkpoint: without "
            "--do_train the head would be random; train first, or give the checkpoint of "
            "a fine-tuned model"
        )
    return report


def head_mismatch(model: keras.Model, source: ModelSource, labels: list[str] | None) -> str:
    """Why the task head `source` holds is not `model`'s to take ("" where it is, or where it
    holds none): another class (a NER model's, for a classifier: both heads live under the
    same names), other settings (3 labels, or a feature-based tagger's BiLSTM), or other
    labels (RTE's from MRPC's). A head for the same labels carries over: AX is MNLI's."""
    saved, said, _ = source.saved_class(type(model))
    if saved is None or saved.head_scope is None:
        return ""
    if saved is not type(model):
        return f"holds a {saved.__name__} ({said})"
    differ = task_model_differences(source.description, model)
    if differ:
        return f"holds a {saved.__name__} with {', '.join(differ)} ({said})"
    if labels and source.labels and source.labels != labels:
        task = f" fine-tuned on {source.task}" if source.task else ""
        return (
            f"holds a {saved.__name__}{task} for the labels {' '.join(source.labels)}, not "
            f"{' '.join(labels)}"
        )
    return ""


def task_model_differences(description: dict | None, model: keras.Model) -> list[str]:
    """What the task model `description` (task_model.json's) has otherwise than `model`: its
    class first, then each setting ("num_labels=3, not 2"); [] where it is the same (or none
    is described). The same variables computing something else would load silently."""
    if description is None:
        return []
    built = keras.saving.serialize_keras_object(model)
    found = [] if description["class_name"] == built["class_name"] else [
        f"a {description['class_name']}, not a {built['class_name']}"
    ]  # fmt: skip
    trained, settings = description["config"], built["config"]
    keys = sorted((set(trained) | set(settings)) - {"config", "name"})
    found += [
        f"{key}={trained.get(key)!r}, not {settings.get(key)!r}"
        for key in keys
        if trained.get(key) != settings.get(key)
    ]
    return found


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
