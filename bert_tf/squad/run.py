"""Fine-tuning on SQuAD and predicting answers: what run_squad.py runs.

`SquadOptions` holds the original's flags (same names and defaults) and ours;
`run_squad(options)` trains and predicts as the original does and writes its files to
output_dir: train.tf_record, eval.tf_record, the checkpoints, predictions.json,
nbest_predictions.json, null_odds.json (SQuAD 2.0), and, when the predict file has answers,
eval_results.json with the official evaluation's numbers.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import random

import numpy as np
import tensorflow as tf

from bert_tf.distribute import RuntimeOptions, check_positive, is_chief
from bert_tf.errors import InputError
from bert_tf.fileio import atomic_write_text
from bert_tf.finetuning import (
    build_trainer,
    check_schedule,
    fine_tune,
    load_model_files,
    train_schedule,
)
from bert_tf.squad import evaluate
from bert_tf.squad.data import SquadExample, read_squad_examples, read_squad_file, tfds_squad
from bert_tf.squad.features import convert_examples_to_features, write_features
from bert_tf.squad.objective import SpanExtraction, squad_dataset
from bert_tf.squad.postprocess import (
    NBEST_FILE,
    NULL_ODDS_FILE,
    PREDICTIONS_FILE,
    RawResult,
    compute_predictions,
    write_predictions,
)
from bert_tf.tokenization import FullTokenizer
from bert_tf.training import Trainer, write_summaries

logger = logging.getLogger(__name__)

EVAL_RESULTS_FILE = "eval_results.json"
# As the original: the training examples are shuffled once, with this seed, before they are
# written (so the 100-record shuffle buffer of the input pipeline is enough).
TRAIN_SHUFFLE_SEED = 12345


@dataclasses.dataclass
class SquadOptions(RuntimeOptions):
    """The original's flags (same names and defaults) and ours; the TPU and runtime flags
    are `RuntimeOptions`'."""

    bert_config_file: str
    vocab_file: str
    output_dir: str
    train_file: str | None = None
    predict_file: str | None = None
    init_checkpoint: str | None = None
    do_lower_case: bool = True
    max_seq_length: int = 384
    doc_stride: int = 128
    max_query_length: int = 64
    do_train: bool = False
    do_predict: bool = False
    train_batch_size: int = 32
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    save_checkpoints_steps: int = 1000
    iterations_per_loop: int = 1000
    n_best_size: int = 20
    max_answer_length: int = 30
    verbose_logging: bool = False
    version_2_with_negative: bool = False
    null_score_diff_threshold: float = 0.0
    use_tfds: bool = False
    tfds_data_dir: str | None = None
    export_dir: str | None = None
    bilstm: bool = False

    def check(self) -> None:
        """Raises `InputError` naming the first flag whose value cannot work."""
        self.check_runtime()
        if not (self.do_train or self.do_predict or self.export_dir):
            raise InputError("at least one of --do_train, --do_predict or --export_dir is needed")
        if self.do_train and not (self.train_file or self.use_tfds):
            raise InputError("--do_train needs --train_file (or --use_tfds)")
        if self.do_predict and not (self.predict_file or self.use_tfds):
            raise InputError("--do_predict needs --predict_file (or --use_tfds)")
        check_positive(
            self,
            "max_seq_length",
            "doc_stride",
            "max_query_length",
            "train_batch_size",
            "predict_batch_size",
            "save_checkpoints_steps",
            "iterations_per_loop",
            "n_best_size",
            "max_answer_length",
        )
        if self.max_seq_length <= self.max_query_length + 3:
            raise InputError(
                f"--max_seq_length={self.max_seq_length} must be greater than "
                f"--max_query_length={self.max_query_length} + 3 ([CLS], [SEP], [SEP]): "
                "no room is left for the context"
            )
        check_schedule(self)

    @property
    def tfds_name(self) -> str:
        return "squad/v2.0" if self.version_2_with_negative else "squad/v1.1"


def read_examples(options: SquadOptions, is_training: bool) -> list[SquadExample]:
    """The training or prediction examples, from the JSON file or tensorflow-datasets."""
    if options.use_tfds:
        split = "train" if is_training else "validation"
        dataset = tfds_squad(options.tfds_name, split, options.tfds_data_dir)
        source = f"{options.tfds_name}[{split}]"
    else:
        source = options.train_file if is_training else options.predict_file
        dataset = read_squad_file(source)
    return read_squad_examples(dataset, source, is_training, options.version_2_with_negative)


def run_squad(options: SquadOptions) -> dict:
    """Trains and predicts as the options say; returns the evaluation (or {}).

    Raises:
        InputError: bad options, data files or checkpoints (one clear line each).
        TrainingDiverged: the loss became NaN or infinite.
    """
    options.check()
    config, tokenizer = load_model_files(options)

    # Reading the examples first: a bad file fails before any TensorFlow work.
    train_examples = read_examples(options, is_training=True) if options.do_train else []
    predict_examples = read_examples(options, is_training=False) if options.do_predict else []
    steps, warmup = train_schedule(len(train_examples), options)
    random.Random(TRAIN_SHUFFLE_SEED).shuffle(train_examples)

    trainer = build_trainer(
        options,
        SpanExtraction(bilstm_units=config.hidden_size if options.bilstm else None),
        config,
        steps,
        warmup,
    )
    chief = is_chief(trainer.strategy)

    if options.do_train:
        train_file = os.path.join(options.output_dir, "train.tf_record")
        if chief:
            num_features = write_features(
                convert_examples_to_features(
                    train_examples,
                    tokenizer,
                    options.max_seq_length,
                    options.doc_stride,
                    options.max_query_length,
                    is_training=True,
                ),
                train_file,
                is_training=True,
            )
            logger.info(
                "training: %d examples, %d features (windows), batch %d, %d steps (%d "
                "warm-up), lr %g",
                len(train_examples),
                num_features,
                options.train_batch_size,
                steps,
                warmup,
                options.learning_rate,
            )
        fine_tune(
            trainer,
            options,
            squad_dataset(
                train_file,
                options.max_seq_length,
                options.train_batch_size,
                is_training=True,
                seed=options.seed,
            ),
            steps,
        )

    results: dict = {}
    if options.do_predict:
        results = _predict(trainer, predict_examples, tokenizer, options)

    if options.export_dir and chief:
        from bert_tf.squad.serving import export_squad  # TensorFlow Text only when exporting

        export_squad(trainer.model, options)
    return results


def _predict(
    trainer: Trainer, examples: list[SquadExample], tokenizer: FullTokenizer, options
) -> dict:
    """Writes the prediction files; evaluates them when the examples have answers."""
    chief = is_chief(trainer.strategy)
    if chief:
        # A failed run must not leave an earlier run's files beside (or as) its own.
        for name in (PREDICTIONS_FILE, NBEST_FILE, NULL_ODDS_FILE, EVAL_RESULTS_FILE):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(options.output_dir, name))
    features = list(
        convert_examples_to_features(
            examples,
            tokenizer,
            options.max_seq_length,
            options.doc_stride,
            options.max_query_length,
            is_training=False,
        )
    )
    record_file = os.path.join(options.output_dir, "eval.tf_record")
    if chief:
        write_features(
            features,
            record_file,
            is_training=False,
            pad_to_multiple_of=options.predict_batch_size,
            max_seq_length=options.max_seq_length,
        )
    logger.info("predicting: %d examples, %d features (windows)", len(examples), len(features))
    outputs = trainer.predict(
        squad_dataset(
            record_file, options.max_seq_length, options.predict_batch_size, is_training=False
        ),
        ("unique_ids", "start_logits", "end_logits"),
    )
    real = outputs["unique_ids"] != 0  # padding records have unique_id 0
    results = [
        RawResult(int(unique_id), start, end)
        for unique_id, start, end in zip(
            outputs["unique_ids"][real],
            outputs["start_logits"][real].astype(np.float32),
            outputs["end_logits"][real].astype(np.float32),
            strict=True,
        )
    ]
    predictions, nbest, null_odds = compute_predictions(
        examples,
        features,
        results,
        options.n_best_size,
        options.max_answer_length,
        options.do_lower_case,
        options.version_2_with_negative,
        options.null_score_diff_threshold,
        options.verbose_logging,
    )
    if not chief:
        return {}
    written = write_predictions(
        options.output_dir,
        predictions,
        nbest,
        null_odds if options.version_2_with_negative else None,
    )
    logger.info("predictions of %d questions in %s", len(predictions), ", ".join(written))

    gold = {example.qas_id: example.answers for example in examples}
    if not any(gold.values()):
        return {}  # a test file: nothing to evaluate against
    if options.version_2_with_negative:
        # As `evaluate-v2.0.py predict_file predictions.json --na-prob-file null_odds.json`.
        metrics = evaluate.evaluate_v2(gold, predictions, na_probs=null_odds)
    else:
        metrics = evaluate.evaluate_v1(gold, predictions)
    atomic_write_text(
        os.path.join(options.output_dir, EVAL_RESULTS_FILE), json.dumps(metrics, indent=2) + "\n"
    )
    writer = tf.summary.create_file_writer(os.path.join(options.output_dir, "eval"))
    write_summaries(writer, metrics, trainer.global_step)
    print(json.dumps(metrics))
    return metrics
