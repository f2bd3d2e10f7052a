"""Fine-tuning and evaluating on SWAG (paper Sec. 4.4, Table 4): what run_swag.py runs.

`SwagOptions` holds the flags (named and defaulted as run_classifier.py's, with the paper's
SWAG settings: lr 2e-5, batch 16, 3 epochs); `run_swag(options)` trains on train.csv,
evaluates on val.csv and predicts test.csv, and writes to output_dir: train/eval/predict
.tf_record, the checkpoints, eval_results.txt (eval_accuracy, eval_loss, global_step, loss),
test_results.tsv (each test example's 4 probabilities) and predictions.csv (`id,pred`).
"""

from __future__ import annotations

import csv
import dataclasses
import logging
import os
import random

import numpy as np
import tensorflow as tf

from bert_tf.classification.run import evaluation_results, softmax, write_test_results
from bert_tf.distribute import RuntimeOptions, check_positive, is_chief
from bert_tf.errors import InputError
from bert_tf.fileio import atomic_open
from bert_tf.finetuning import (
    build_trainer,
    check_schedule,
    fine_tune,
    load_model_files,
    train_schedule,
)
from bert_tf.swag.data import SPLIT_FILES, SwagExample, get_examples
from bert_tf.swag.features import convert_examples_to_features, swag_dataset, write_features
from bert_tf.swag.objective import MultipleChoice
from bert_tf.tokenization import FullTokenizer
from bert_tf.training import Trainer, write_eval_results, write_summaries

logger = logging.getLogger(__name__)

PREDICTIONS_FILE = "predictions.csv"
# SWAG's train.csv lists the questions of one video together, and the input pipeline only
# shuffles in a 100-record buffer: the examples are shuffled once, with this seed, before
# they are written (as run_squad.py does), so that a batch mixes videos.
TRAIN_SHUFFLE_SEED = 12345


@dataclasses.dataclass
class SwagOptions(RuntimeOptions):
    """run_classifier.py's flags (same names) with the paper's SWAG defaults; the TPU and
    runtime flags are `RuntimeOptions`'."""

    data_dir: str
    bert_config_file: str
    vocab_file: str
    output_dir: str
    init_checkpoint: str | None = None
    do_lower_case: bool = True
    max_seq_length: int = 128
    do_train: bool = False
    do_eval: bool = False
    do_predict: bool = False
    train_batch_size: int = 16
    eval_batch_size: int = 8
    predict_batch_size: int = 8
    learning_rate: float = 2e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    save_checkpoints_steps: int = 1000
    iterations_per_loop: int = 1000

    def check(self) -> None:
        """Raises `InputError` naming the first flag whose value cannot work."""
        self.check_runtime()
        if not self.data_dir:
            raise InputError("--data_dir is required")
        if not (self.do_train or self.do_eval or self.do_predict):
            raise InputError("at least one of --do_train, --do_eval or --do_predict is needed")
        check_positive(
            self,
            "max_seq_length",
            "train_batch_size",
            "eval_batch_size",
            "predict_batch_size",
            "save_checkpoints_steps",
            "iterations_per_loop",
        )
        if self.max_seq_length < 3:
            raise InputError(f"--max_seq_length={self.max_seq_length}; expected at least 3")
        check_schedule(self)


def run_swag(options: SwagOptions) -> dict:
    """Trains, evaluates and predicts as the options say; returns the eval metrics (or {}).

    Raises:
        InputError: bad options, data files or checkpoints (one clear line each).
        TrainingDiverged: the loss became NaN or infinite.
    """
    options.check()
    config, tokenizer = load_model_files(options)

    # Reading every file first: a bad one fails before any TensorFlow work.
    examples = {
        split: get_examples(options.data_dir, split)
        for split, wanted in (
            ("train", options.do_train),
            ("dev", options.do_eval),
            ("test", options.do_predict),
        )
        if wanted
    }
    train_examples = examples.get("train", [])
    steps, warmup = train_schedule(len(train_examples), options)
    random.Random(TRAIN_SHUFFLE_SEED).shuffle(train_examples)

    trainer = build_trainer(
        options,
        MultipleChoice(),
        config,
        steps,
        warmup,
    )
    chief = is_chief(trainer.strategy)

    if options.do_train:
        train_file = os.path.join(options.output_dir, "train.tf_record")
        if chief:
            write_features(
                convert_examples_to_features(train_examples, options.max_seq_length, tokenizer),
                train_file,
                options.max_seq_length,
            )
        logger.info(
            "training SWAG: %d examples, batch %d, %d steps (%d warm-up), lr %g",
            len(train_examples),
            options.train_batch_size,
            steps,
            warmup,
            options.learning_rate,
        )
        fine_tune(
            trainer,
            options,
            swag_dataset(
                train_file,
                options.max_seq_length,
                options.train_batch_size,
                is_training=True,
                seed=options.seed,
            ),
            steps,
        )

    results: dict = {}
    if options.do_eval:
        outputs = _predict(
            trainer, examples["dev"], options, tokenizer, "eval.tf_record", options.eval_batch_size
        )
        results = evaluation_results(outputs, options.eval_batch_size)
        results["global_step"] = trainer.global_step
        logger.info("eval: %s", results)
        if chief:
            write_eval_results(os.path.join(options.output_dir, "eval_results.txt"), results)
            writer = tf.summary.create_file_writer(os.path.join(options.output_dir, "eval"))
            write_summaries(writer, results, trainer.global_step)

    if options.do_predict:
        outputs = _predict(
            trainer,
            examples["test"],
            options,
            tokenizer,
            "predict.tf_record",
            options.predict_batch_size,
        )
        if chief:
            write_predictions(examples["test"], outputs, options.output_dir)
    return results


def _predict(
    trainer: Trainer,
    examples: list[SwagExample],
    options: SwagOptions,
    tokenizer: FullTokenizer,
    record_name: str,
    batch_size: int,
) -> dict:
    """Logits [N, 4], label_ids and is_real_example [N] of the examples and their padding,
    in the examples' order."""
    record_file = os.path.join(options.output_dir, record_name)
    if is_chief(trainer.strategy):
        write_features(
            convert_examples_to_features(examples, options.max_seq_length, tokenizer),
            record_file,
            options.max_seq_length,
            pad_to_multiple_of=batch_size,
        )
    logger.info("%s: %d examples (padded to batches of %d)", record_name, len(examples), batch_size)
    dataset = swag_dataset(record_file, options.max_seq_length, batch_size, is_training=False)
    outputs = trainer.predict(dataset, ("logits", "label_ids", "is_real_example", "example_index"))
    order = np.argsort(outputs["example_index"], kind="stable")
    return {name: value[order] for name, value in outputs.items()}


def write_predictions(examples: list[SwagExample], outputs: dict, output_dir: str) -> None:
    """test_results.tsv (each real example's 4 probabilities, tab-separated, as
    run_classifier.py's) and predictions.csv (`id,pred`: the example's `fold-ind` and the
    index of the ending predicted)."""
    logits = outputs["logits"][outputs["is_real_example"].astype(bool)]  # [N, 4]
    write_test_results(
        os.path.join(output_dir, "test_results.tsv"), softmax(logits.astype(np.float64))
    )
    with atomic_open(os.path.join(output_dir, PREDICTIONS_FILE)) as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["id", "pred"])
        for example, prediction in zip(examples, np.argmax(logits, axis=-1), strict=True):
            writer.writerow([example.swag_id, int(prediction)])
    logger.info(
        "predictions of %d examples of %s in test_results.tsv and %s",
        len(examples),
        SPLIT_FILES["test"],
        PREDICTIONS_FILE,
    )
