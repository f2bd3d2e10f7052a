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

import logging
import os

import tensorflow as tf

from bert_tf.config import BertConfig
from bert_tf.io import filesystem
from bert_tf.io.fileio import check_writable_folder, staging_folder
from bert_tf.model_io.saving import save_model_directory
from bert_tf.options import check_options
from bert_tf.pretraining.documents import expand_input_files
from bert_tf.pretraining.input_pipeline import (
    check_records,
    naming_damaged_records,
    pretraining_dataset,
)
from bert_tf.pretraining.objectives import get_objective
from bert_tf.pretraining.options import PretrainingOptions
from bert_tf.training.checkpoints import check_checkpoint_folder
from bert_tf.training.distribute import input_seed, is_chief, make_strategy, num_workers
from bert_tf.training.evaluation import evaluate
from bert_tf.training.setup import build_trainer, train
from bert_tf.training.summaries import summary_writer, write_eval_results, write_summaries

logger = logging.getLogger(__name__)


def run_pretraining(options: PretrainingOptions) -> dict:
    """Trains and/or evaluates as the options say; returns the eval metrics (or {}).

    Raises:
        InputError: bad options, input files or checkpoints (one clear line each).
        TrainingDiverged: the loss became NaN or infinite.
    """
    check_options(options)
    check_writable_folder(options.output_dir, "--output_dir")
    check_checkpoint_folder(options.output_dir, "--output_dir")
    config = BertConfig.from_json_file(options.bert_config_file)
    config.check_sequence_length(options.max_seq_length, options.bert_config_file)
    input_files = expand_input_files(options.input_file)
    # As the original, evaluation reads the training records unless held-out ones are given.
    eval_files = input_files
    if options.eval_input_file:
        eval_files = expand_input_files(options.eval_input_file, "--eval_input_file")
    strategy = make_strategy(options)  # the first TensorFlow work
    lengths = (options.max_seq_length, options.max_predictions_per_seq)
    vocab = (config.vocab_size, options.bert_config_file)
    check_records(input_files, *lengths, *vocab)
    if options.do_eval and eval_files is not input_files:
        check_records(eval_files, *lengths, *vocab, flag="--eval_input_file")
    logger.info("input files: %d (%s ...)", len(input_files), input_files[0])

    objective = get_objective(options.objective)
    settings = options.trainer_settings(
        optimizer=options.optimizer,
        keep_checkpoint_every_n_steps=options.keep_checkpoint_every_n_steps or None,
    )
    trainer = build_trainer(
        strategy, objective, config, options.num_train_steps, options.num_warmup_steps, settings
    )
    if is_chief(strategy):
        # Beside the training checkpoints: what fine-tuning from a `ckpt-N` needs to know
        # (an LTR model's attention is causal), and its vocab: output_dir is a model directory.
        save_model_directory(
            options.output_dir, trainer.model, options.vocab_file, options.do_lower_case,
            weights=False,
        )  # fmt: skip
    if options.do_train:
        _log_training(options, strategy.num_replicas_in_sync)
        seen = trainer.global_step * options.train_batch_size if options.resume_input else 0
        if seen:
            logger.info("resuming the input after the %d records read so far", seen)
        dataset = _dataset(input_files, options.train_batch_size, True, options, strategy, seen)
        with naming_damaged_records("--input_file", input_files):
            train(trainer, settings, dataset, options.num_train_steps)
        if is_chief(strategy):
            export_pretrained(
                trainer.model, options.output_dir, options.vocab_file, options.do_lower_case
            )
    return _evaluate(trainer, options, eval_files) if options.do_eval else {}


def _evaluate(trainer, options: PretrainingOptions, eval_files: list[str]) -> dict:
    """The objective's metrics over the eval records, written (on the chief) to
    eval_results.txt and TensorBoard's eval/."""
    strategy = trainer.strategy
    dataset = _dataset(eval_files, options.eval_batch_size, False, options, strategy)
    flag = "--eval_input_file" if options.eval_input_file else "--input_file"
    with naming_damaged_records(flag, eval_files):
        results = evaluate(trainer, dataset, options.max_eval_steps)
    logger.info("eval: %s", results)
    if is_chief(strategy):
        write_eval_results(os.path.join(options.output_dir, "eval_results.txt"), results)
        with summary_writer(strategy, options.output_dir, "eval") as writer:
            write_summaries(writer, results, trainer.global_step)
    return results


def _log_training(options: PretrainingOptions, replicas: int) -> None:
    micro_batches = options.gradient_accumulation_steps
    logger.info(
        "training %s to step %d: batch %d on %d replica(s) (%d micro-batch(es) of %d per "
        "replica per step), %s, objective %s",
        options.optimizer, options.num_train_steps, options.train_batch_size, replicas,
        micro_batches, options.train_batch_size // (replicas * micro_batches), options.dtype,
        options.objective,
    )  # fmt: skip


def _dataset(
    files: list[str], batch_size: int, is_training: bool, options, strategy, skip: int = 0
):
    """The records' batches, after the first `skip` (of all workers together); workers read
    disjoint files when there are enough of them, else disjoint records."""
    workers = num_workers(strategy)
    by_file = len(files) >= workers
    if by_file:
        # Each worker reads its own files, a share of each global batch from each: it skips
        # its share of what was read (the whole count would skip records never read).
        skip //= workers
    dataset = pretraining_dataset(
        files,
        batch_size,
        options.max_seq_length,
        options.max_predictions_per_seq,
        is_training=is_training,
        seed=input_seed(options.seed, strategy) if is_training else None,
        skip_records=skip,
    )
    data_options = tf.data.Options()
    policy = tf.data.experimental.AutoShardPolicy
    data_options.experimental_distribute.auto_shard_policy = policy.FILE if by_file else policy.DATA
    return dataset.with_options(data_options)


def export_pretrained(
    model, output_dir: str, vocab_file: str | None = None, do_lower_case: bool | None = None
) -> str:
    """Writes `output_dir/pretrained/`: bert_model.ckpt (original names), bert_config.json
    (with causal_attention for a left-to-right model), vocab.txt and, where the casing is
    known, tokenizer_config.json, as Google's released models are laid out. Staged beside it
    and moved into place whole (the config last), on a local disk as in a bucket: a folder
    cut short never looks like a model."""
    directory = os.path.join(output_dir, "pretrained")
    with staging_folder(directory) as staging:
        save_model_directory(staging, model, vocab_file, do_lower_case)
        if filesystem.isdir(directory):  # an earlier export, of fewer steps
            filesystem.rmtree(directory)
        filesystem.rename(staging, directory, last=("bert_model.ckpt.index", "bert_config.json"))
    prefix = os.path.join(directory, "bert_model.ckpt")
    logger.info("the pre-trained model in the original format: %s", prefix)
    return prefix
