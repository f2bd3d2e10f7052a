"""Pre-training as the original's run_pretraining.py, in TF2: what run_pretraining.py calls.

    options = PretrainingOptions(bert_config_file=..., input_file=..., output_dir=...,
                                 do_train=True, num_train_steps=1000)
    results = run_pretraining(options)

Outputs in `output_dir`: training checkpoints (`ckpt-<step>`, the last few kept; a rerun of
the same command resumes from the latest), TensorBoard summaries (`train/`, `eval/`),
`eval_results.txt`, and at the end of training `pretrained/`: the model in the original
format (`bert_model.ckpt` with the original variable names, `bert_config.json`, and
`vocab.txt` when a vocab file is given), which every fine-tuning script starts from.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import tempfile

import keras
import tensorflow as tf

from bert_tf.checkpoints import load_checkpoint, save_original_checkpoint
from bert_tf.config import CAUSAL_ATTENTION, BertConfig
from bert_tf.distribute import RuntimeOptions, check_batch, check_positive, is_chief, warn_if_slow
from bert_tf.errors import InputError
from bert_tf.optimization import create_optimizer
from bert_tf.pretraining.documents import expand_input_files
from bert_tf.pretraining.input_pipeline import check_records, pretraining_dataset
from bert_tf.pretraining.objectives import OBJECTIVES, get_objective
from bert_tf.training import Trainer, write_eval_results, write_summaries

logger = logging.getLogger(__name__)

OPTIMIZERS = ("adamw", "lamb")


@dataclasses.dataclass
class PretrainingOptions(RuntimeOptions):
    """The original's flags (same names and defaults) and ours; the TPU and runtime flags
    are `RuntimeOptions`'."""

    bert_config_file: str
    input_file: str
    output_dir: str
    init_checkpoint: str | None = None
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    do_train: bool = False
    do_eval: bool = False
    train_batch_size: int = 32
    eval_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_steps: int = 100000
    num_warmup_steps: int = 10000
    save_checkpoints_steps: int = 1000
    iterations_per_loop: int = 1000
    max_eval_steps: int = 100
    optimizer: str = "adamw"
    objective: str = "mlm_nsp"
    vocab_file: str | None = None
    eval_input_file: str | None = None
    keep_checkpoint_every_n_steps: int = 0

    def check(self) -> None:
        """Raises `InputError` naming the first flag whose value cannot work."""
        self.check_runtime()
        for name, allowed in {"optimizer": OPTIMIZERS, "objective": OBJECTIVES}.items():
            if getattr(self, name) not in allowed:
                raise InputError(
                    f"--{name}={getattr(self, name)}; expected one of {', '.join(allowed)}"
                )
        if not (self.do_train or self.do_eval):
            raise InputError("at least one of --do_train and --do_eval must be True")
        check_positive(
            self,
            "max_seq_length",
            "max_predictions_per_seq",
            "train_batch_size",
            "eval_batch_size",
            "num_train_steps",
            "save_checkpoints_steps",
            "iterations_per_loop",
            "max_eval_steps",
        )
        if self.keep_checkpoint_every_n_steps < 0:
            raise InputError(
                f"--keep_checkpoint_every_n_steps={self.keep_checkpoint_every_n_steps}; "
                "expected >= 0 (0: keep none beyond --keep_checkpoint_max)"
            )
        if self.num_warmup_steps < 0:
            raise InputError(f"--num_warmup_steps={self.num_warmup_steps}; expected >= 0")
        if self.learning_rate <= 0:
            raise InputError(f"--learning_rate={self.learning_rate}; expected > 0")


def _shard_policy(dataset: tf.data.Dataset, num_files: int, num_workers: int):
    """Workers read disjoint files when there are enough of them, else disjoint records."""
    options = tf.data.Options()
    policy = tf.data.experimental.AutoShardPolicy
    options.experimental_distribute.auto_shard_policy = (
        policy.FILE if num_files >= num_workers else policy.DATA
    )
    return dataset.with_options(options)


def run_pretraining(options: PretrainingOptions) -> dict:
    """Trains and/or evaluates as the options say; returns the eval metrics (or {}).

    Raises:
        InputError: bad options, input files or checkpoints (one clear line each).
        TrainingDiverged: the loss became NaN or infinite.
    """
    options.check()
    config = BertConfig.from_json_file(options.bert_config_file)
    if options.max_seq_length > config.max_position_embeddings:
        raise InputError(
            f"--max_seq_length={options.max_seq_length} is longer than max_position_embeddings="
            f"{config.max_position_embeddings} in {options.bert_config_file}"
        )
    input_files = expand_input_files(options.input_file)
    # As the original, evaluation reads the training records unless held-out ones are given.
    eval_files = (
        expand_input_files(options.eval_input_file, "--eval_input_file")
        if options.eval_input_file
        else input_files
    )
    # First TensorFlow work: logical devices can be set up only before the runtime starts.
    strategy = options.make_strategy()
    check_records(input_files, options.max_seq_length, options.max_predictions_per_seq)
    if options.do_eval and eval_files is not input_files:
        check_records(eval_files, options.max_seq_length, options.max_predictions_per_seq)
    warn_if_slow(strategy, options.dtype, options.use_xla)
    logger.info("input files: %d (%s ...)", len(input_files), input_files[0])
    replicas = strategy.num_replicas_in_sync
    check_batch(
        "train_batch_size", options.train_batch_size, replicas, options.gradient_accumulation_steps
    )
    check_batch("eval_batch_size", options.eval_batch_size, replicas)
    if options.seed is not None:
        keras.utils.set_random_seed(options.seed)
    keras.config.set_dtype_policy(options.dtype)
    chief = is_chief(strategy)
    # Non-chief workers take part in saving (it is collective) but write to a scratch folder.
    checkpoint_dir = options.output_dir if chief else tempfile.mkdtemp(prefix="bert_tf_worker_")

    objective = get_objective(options.objective)
    with strategy.scope():
        model = objective.build_model(config)
        optimizer = create_optimizer(
            options.learning_rate,
            options.num_train_steps,
            options.num_warmup_steps,
            optimizer=options.optimizer,
        )
        trainer = Trainer(
            strategy,
            model,
            objective,
            optimizer,
            checkpoint_dir=checkpoint_dir,
            gradient_accumulation_steps=options.gradient_accumulation_steps,
            use_xla=options.use_xla,
            loss_scaling=options.dtype == "mixed_float16",
            max_checkpoints_to_keep=options.keep_checkpoint_max,
            keep_checkpoint_every_n_steps=options.keep_checkpoint_every_n_steps or None,
        )
    resumed = trainer.restore()
    if resumed:
        logger.info("resuming from %s at step %d", resumed, trainer.global_step)
    elif options.init_checkpoint:
        logger.info("initializing from %s", load_checkpoint(model, options.init_checkpoint))

    num_workers = getattr(strategy.extended, "_num_workers", 1)
    config = trained_config(config, objective.causal)
    train_writer = eval_writer = None
    if chief:
        # Beside the training checkpoints: what fine-tuning from a `ckpt-N` needs to know
        # (an LTR model's attention is causal).
        config.to_json_file(os.path.join(options.output_dir, "bert_config.json"))
        train_writer = tf.summary.create_file_writer(os.path.join(options.output_dir, "train"))
        if options.do_eval:
            eval_writer = tf.summary.create_file_writer(os.path.join(options.output_dir, "eval"))

    if options.do_train:
        logger.info(
            "training %s to step %d: batch %d on %d replica(s) (%d micro-batch(es) of %d per "
            "replica per step), %s, objective %s",
            options.optimizer,
            options.num_train_steps,
            options.train_batch_size,
            replicas,
            options.gradient_accumulation_steps,
            options.train_batch_size // (replicas * options.gradient_accumulation_steps),
            options.dtype,
            options.objective,
        )
        dataset = pretraining_dataset(
            input_files,
            options.train_batch_size,
            options.max_seq_length,
            options.max_predictions_per_seq,
            is_training=True,
            seed=options.seed,
        )
        trainer.train(
            _shard_policy(dataset, len(input_files), num_workers),
            num_train_steps=options.num_train_steps,
            global_batch_size=options.train_batch_size,
            steps_per_loop=options.iterations_per_loop,
            save_checkpoints_steps=options.save_checkpoints_steps,
            log_steps=options.log_steps,
            summary_writer=train_writer,
        )
        if chief:
            export_pretrained(model, config, options)

    results: dict = {}
    if options.do_eval:
        dataset = pretraining_dataset(
            eval_files,
            options.eval_batch_size,
            options.max_seq_length,
            options.max_predictions_per_seq,
            is_training=False,
        )
        results = trainer.evaluate(
            _shard_policy(dataset, len(eval_files), num_workers), options.max_eval_steps
        )
        logger.info("eval: %s", results)
        if chief:
            write_eval_results(os.path.join(options.output_dir, "eval_results.txt"), results)
            write_summaries(eval_writer, results, trainer.global_step)
    if not chief:
        shutil.rmtree(checkpoint_dir, ignore_errors=True)
    return results


def trained_config(config: BertConfig, causal: bool) -> BertConfig:
    """A copy of `config`, marked causal for the left-to-right model."""
    config = BertConfig.from_dict(config.to_dict())
    if causal:
        # Not an original key: tells fine-tuning that this model attends left to right.
        config.extra[CAUSAL_ATTENTION] = True
    return config


def export_pretrained(model, config: BertConfig, options: PretrainingOptions) -> str:
    """Writes `output_dir/pretrained/`: bert_model.ckpt (original names), bert_config.json
    and vocab.txt, as Google's released models are laid out."""
    directory = os.path.join(options.output_dir, "pretrained")
    prefix = save_original_checkpoint(model, os.path.join(directory, "bert_model.ckpt"))
    config = trained_config(config, model.encoder.causal)
    config.to_json_file(os.path.join(directory, "bert_config.json"))
    if options.vocab_file:
        shutil.copyfile(options.vocab_file, os.path.join(directory, "vocab.txt"))
    logger.info("the pre-trained model in the original format: %s", prefix)
    return prefix
