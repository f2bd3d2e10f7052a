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
import shutil
import tempfile

import keras
import tensorflow as tf

from bert_tf.checkpointing import training_checkpoints
from bert_tf.config import BertConfig
from bert_tf.distribute import STRATEGIES, check_batch, get_strategy, is_chief, warn_if_slow
from bert_tf.errors import InputError, first_line
from bert_tf.loading import head_variables, load_checkpoint
from bert_tf.objective import Objective
from bert_tf.optimization import create_optimizer
from bert_tf.options import Options, greater_than_zero, one_of, option, options, positive
from bert_tf.summaries import summary_writer
from bert_tf.training import DTYPES, Trainer

logger = logging.getLogger(__name__)


@options
class TpuOptions(Options):
    """The original scripts' TPU flags, with their defaults."""

    use_tpu: bool = option(False, "Whether to use TPU or GPU/CPU.")
    tpu_name: str | None = option(None, "The Cloud TPU to use for training (name or grpc:// url).")
    tpu_zone: str | None = option(None, "[Optional] GCE zone where the Cloud TPU is located in.")
    gcp_project: str | None = option(None, "[Optional] Project name for the Cloud TPU.")
    master: str | None = option(None, "[Optional] TensorFlow master URL.")
    num_tpu_cores: int = option(
        8, "Only used if `use_tpu` is True. Total number of TPU cores to use."
    )


@options
class RuntimeOptions(TpuOptions):
    """Ours, shared by the training scripts: distribution, precision, XLA, accumulation, seed,
    logging and checkpoint retention."""

    distribution_strategy: str = option(
        "one_device",
        "one_device, mirrored (GPUs of this machine), multi_worker_mirrored (TF_CONFIG) or tpu "
        "(also chosen by --use_tpu).",
        one_of(*STRATEGIES),
    )
    num_gpus: int = option(
        1,
        "Replicas of --distribution_strategy=mirrored (on a machine without GPUs: logical CPU "
        "devices).",
        positive,
    )
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

    def make_strategy(self) -> tf.distribute.Strategy:
        """The strategy the flags ask for (call before any other TensorFlow work). As the
        original, --use_tpu (or a --tpu_name) means a TPU."""
        return get_strategy(
            "tpu" if self.use_tpu or self.tpu_name else self.distribution_strategy,
            num_gpus=self.num_gpus,
            tpu_name=self.tpu_name or self.master,
            tpu_zone=self.tpu_zone,
            gcp_project=self.gcp_project,
        )


@options
class TrainingOptions(RuntimeOptions):
    """The original's flags that pre-training and fine-tuning share, with its defaults."""

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


@options
class EvalOptions(Options):
    """--do_eval: evaluation apart from training (and, fine-tuning, from the test set)."""

    do_eval: bool = option(False, "Whether to run eval on the dev set.")
    eval_batch_size: int = option(8, "Total batch size for eval.", positive)


def build_trainer(
    strategy: tf.distribute.Strategy,
    options: TrainingOptions,
    objective: Objective,
    config: BertConfig,
    num_train_steps: int,
    num_warmup_steps: int,
    optimizer: str = "adamw",
    keep_checkpoint_every_n_steps: int | None = None,
) -> Trainer:
    """The objective's model under `strategy`, in a `Trainer` with the original's optimizer
    (options.learning_rate, the steps given); restored from the latest checkpoint in
    options.output_dir (a rerun resumes), else from options.init_checkpoint.

    Raises:
        InputError: a batch that does not split evenly, or a checkpoint that does not fit.
    """
    trainer = _new_trainer(
        strategy, options, objective, config, num_train_steps, num_warmup_steps, optimizer,
        keep_checkpoint_every_n_steps,
    )  # fmt: skip
    model = trainer.model
    try:
        resumed = trainer.checkpoints.restore(
            options.output_dir
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
        latest = os.path.basename(training_checkpoints(options.output_dir)[-1])
        raise InputError(
            f"--output_dir={options.output_dir}: its checkpoint {latest} does not fit the "
            f"model built from --bert_config_file ({mismatch}); it holds another model: give "
            "another --output_dir, or the config it was trained with"
        )
    if resumed:
        logger.info("restored %s (step %d)", resumed, trainer.global_step)
        return trainer
    if not (options.do_train or options.init_checkpoint):
        raise InputError(
            f"--output_dir={options.output_dir} holds no checkpoint and no --init_checkpoint "
            "is given: there is no trained model to evaluate, predict with or export"
        )
    if options.init_checkpoint:
        _initialize(model, options)
    return trainer


def _new_trainer(
    strategy, options, objective, config, num_train_steps, num_warmup_steps, optimizer, keep_every
) -> Trainer:
    """The objective's model and the original's optimizer under `strategy`, in a `Trainer`
    that saves to options.output_dir (on the chief), not yet restored."""
    warn_if_slow(strategy, options.dtype, options.use_xla)
    _check_batches(strategy, options)
    if options.seed is not None:
        keras.utils.set_random_seed(options.seed)
    keras.config.set_dtype_policy(options.dtype)
    with strategy.scope():
        return Trainer(
            strategy,
            objective.build_model(config),
            objective,
            create_optimizer(
                options.learning_rate, max(num_train_steps, 1), num_warmup_steps, optimizer
            ),
            checkpoint_dir=_checkpoint_dir(strategy, options.output_dir),
            gradient_accumulation_steps=options.gradient_accumulation_steps,
            use_xla=options.use_xla,
            loss_scaling=options.dtype == "mixed_float16",
            max_checkpoints_to_keep=options.keep_checkpoint_max,
            keep_checkpoint_every_n_steps=keep_every,
        )


def _initialize(model, options: TrainingOptions) -> None:
    """`model` from options.init_checkpoint; a model to evaluate or export without training
    must get its head there."""
    report = load_checkpoint(model, options.init_checkpoint)
    logger.info("initializing from %s", report.source)
    if not options.do_train and head_variables(model) and not report.head_loaded:
        raise InputError(
            f"--init_checkpoint={options.init_checkpoint} has no {type(model).__name__} "
            f"head, and --output_dir={options.output_dir} no checkpoint: without "
            "--do_train the head would be random; train first, or give the checkpoint of "
            "a fine-tuned model"
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


def _checkpoint_dir(strategy: tf.distribute.Strategy, output_dir: str) -> str:
    """Where this worker saves: output_dir on the chief; the other workers take part in each
    (collective) save but write to a scratch folder, removed at exit."""
    if is_chief(strategy):
        os.makedirs(output_dir, exist_ok=True)
        return output_dir
    scratch = tempfile.mkdtemp(prefix="bert_tf_worker_")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    return scratch


def _check_batches(strategy: tf.distribute.Strategy, options: TrainingOptions) -> None:
    """Every `*_batch_size` option is a global batch: it must split into the replicas (the
    train batch also into the accumulation steps)."""
    for field in dataclasses.fields(options):
        if field.name.endswith("_batch_size"):
            accumulation = (
                options.gradient_accumulation_steps if field.name == "train_batch_size" else 1
            )
            replicas = strategy.num_replicas_in_sync
            check_batch(field.name, getattr(options, field.name), replicas, accumulation)


def train(trainer: Trainer, options: TrainingOptions, dataset, num_train_steps: int) -> None:
    """Trains on `dataset` to `num_train_steps` as the options say (batch, steps per loop,
    checkpoints, logging), with TensorBoard scalars in output_dir/train on the chief."""
    with summary_writer(trainer.strategy, options.output_dir, "train") as writer:
        trainer.train(
            dataset,
            num_train_steps=num_train_steps,
            global_batch_size=options.train_batch_size,
            steps_per_loop=options.iterations_per_loop,
            save_checkpoints_steps=options.save_checkpoints_steps,
            log_steps=options.log_steps,
            summary_writer=writer,
        )
