"""What every fine-tuning script does around its task's own work: the model files checked,
the strategy, the model and its `Trainer` (resuming from output_dir or starting from
--init_checkpoint), and the training run."""

from __future__ import annotations

import dataclasses
import logging
import os

import keras
import tensorflow as tf

from bert_tf.checkpoints import adopt_checkpoint_attention, load_checkpoint
from bert_tf.config import BertConfig
from bert_tf.distribute import RuntimeOptions, check_batch, is_chief, warn_if_slow
from bert_tf.errors import InputError
from bert_tf.optimization import create_optimizer
from bert_tf.tokenization import FullTokenizer, validate_case_matches_checkpoint
from bert_tf.training import Trainer

logger = logging.getLogger(__name__)


def check_schedule(options) -> None:
    """Raises `InputError` unless --num_train_epochs, --warmup_proportion and
    --learning_rate can make a schedule."""
    if options.num_train_epochs <= 0:
        raise InputError(f"--num_train_epochs={options.num_train_epochs}; expected > 0")
    if not 0 <= options.warmup_proportion <= 1:
        raise InputError(f"--warmup_proportion={options.warmup_proportion}; expected 0 to 1")
    if options.learning_rate <= 0:
        raise InputError(f"--learning_rate={options.learning_rate}; expected > 0")


def train_schedule(num_examples: int, options) -> tuple[int, int]:
    """(num_train_steps, num_warmup_steps) as the original: `int(examples / batch * epochs)`
    and `int(steps * warmup_proportion)`.

    Raises:
        InputError: training (--do_train) that would make no step.
    """
    steps = int(num_examples / options.train_batch_size * options.num_train_epochs)
    if options.do_train and steps < 1:
        raise InputError(
            f"{num_examples} training examples at --train_batch_size="
            f"{options.train_batch_size} and --num_train_epochs={options.num_train_epochs} "
            "make no training step"
        )
    return steps, int(steps * options.warmup_proportion)


def load_model_files(options) -> tuple[BertConfig, FullTokenizer]:
    """The model's bert_config.json and vocab, checked against each other and the options
    (casing against the checkpoint's name, max_seq_length against the positions)."""
    validate_case_matches_checkpoint(options.do_lower_case, options.init_checkpoint)
    config = BertConfig.from_json_file(options.bert_config_file)
    if options.max_seq_length > config.max_position_embeddings:
        raise InputError(
            f"--max_seq_length={options.max_seq_length} is longer than max_position_embeddings="
            f"{config.max_position_embeddings} in {options.bert_config_file}"
        )
    tokenizer = FullTokenizer(options.vocab_file, do_lower_case=options.do_lower_case)
    config.check_vocab(len(tokenizer.vocab), options.vocab_file)
    if options.init_checkpoint:
        config = adopt_checkpoint_attention(config, options.init_checkpoint)
    return config, tokenizer


def build_trainer(
    options: RuntimeOptions,
    objective,
    config: BertConfig,
    num_train_steps: int,
    num_warmup_steps: int,
) -> Trainer:
    """The objective's model under the strategy the options ask for, in a `Trainer` with the
    original's optimizer (options.learning_rate, the steps given); restored from the latest
    checkpoint in options.output_dir (a rerun resumes), else from options.init_checkpoint.

    Every `*_batch_size` of the options is a global batch, checked against the replicas (the
    train batch also against the accumulation steps).

    Raises:
        InputError: a batch that does not split evenly, a checkpoint that does not fit, or no
            checkpoint at all when there is no training (nothing to predict with).
    """
    strategy = options.make_strategy()
    warn_if_slow(strategy, options.dtype, options.use_xla)
    replicas = strategy.num_replicas_in_sync
    for field in dataclasses.fields(options):
        if field.name.endswith("_batch_size"):
            accumulation = (
                options.gradient_accumulation_steps if field.name == "train_batch_size" else 1
            )
            check_batch(field.name, getattr(options, field.name), replicas, accumulation)
    if options.seed is not None:
        keras.utils.set_random_seed(options.seed)
    keras.config.set_dtype_policy(options.dtype)
    chief = is_chief(strategy)
    os.makedirs(options.output_dir, exist_ok=True)

    with strategy.scope():
        model = objective.build_model(config)
        trainer = Trainer(
            strategy,
            model,
            objective,
            create_optimizer(options.learning_rate, max(num_train_steps, 1), num_warmup_steps),
            checkpoint_dir=options.output_dir if chief else None,
            gradient_accumulation_steps=options.gradient_accumulation_steps,
            use_xla=options.use_xla,
            loss_scaling=options.dtype == "mixed_float16",
            max_checkpoints_to_keep=options.keep_checkpoint_max,
        )
    resumed = trainer.restore()
    if resumed:
        logger.info("restored %s (step %d)", resumed, trainer.global_step)
    elif options.init_checkpoint:
        logger.info("initializing from %s", load_checkpoint(model, options.init_checkpoint))
    elif not options.do_train:
        raise InputError(
            f"--output_dir={options.output_dir} holds no checkpoint and no --init_checkpoint "
            "is given: there is no trained model to evaluate, predict with or export"
        )
    return trainer


def fine_tune(trainer: Trainer, options, dataset: tf.data.Dataset, num_train_steps: int) -> None:
    """Trains on `dataset` to `num_train_steps` as the options say (batch, steps per loop,
    checkpoints, logging), with TensorBoard scalars in output_dir/train (chief only)."""
    writer = None
    if is_chief(trainer.strategy):
        writer = tf.summary.create_file_writer(os.path.join(options.output_dir, "train"))
    trainer.train(
        dataset,
        num_train_steps=num_train_steps,
        global_batch_size=options.train_batch_size,
        steps_per_loop=options.iterations_per_loop,
        save_checkpoints_steps=options.save_checkpoints_steps,
        log_steps=options.log_steps,
        summary_writer=writer,
    )
