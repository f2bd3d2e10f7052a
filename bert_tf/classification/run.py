"""Fine-tuning and evaluating a sentence(-pair) classifier: what run_classifier.py runs.

`ClassifierOptions` holds the original's flags (same names and defaults) and ours;
`run_classifier(options)` trains, evaluates and predicts as the original does, and writes
its files to output_dir: train/eval/predict.tf_record, the checkpoints, eval_results.txt,
test_results.tsv, and the GLUE submission file (e.g. MRPC.tsv).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from bert_tf.classification.features import convert_examples_to_features, write_features
from bert_tf.classification.input_pipeline import classifier_dataset
from bert_tf.classification.metrics import task_metrics
from bert_tf.classification.objective import Classification
from bert_tf.classification.processors import DataProcessor, get_processor
from bert_tf.classification.tfds_glue import tfds_examples
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
from bert_tf.tokenization import FullTokenizer
from bert_tf.training import Trainer, write_eval_results, write_summaries

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class ClassifierOptions(RuntimeOptions):
    """The original's flags (same names and defaults) and ours; the TPU and runtime flags
    are `RuntimeOptions`'."""

    data_dir: str | None
    bert_config_file: str
    task_name: str
    vocab_file: str
    output_dir: str
    init_checkpoint: str | None = None
    do_lower_case: bool = True
    max_seq_length: int = 128
    do_train: bool = False
    do_eval: bool = False
    do_predict: bool = False
    train_batch_size: int = 32
    eval_batch_size: int = 8
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    save_checkpoints_steps: int = 1000
    iterations_per_loop: int = 1000
    use_tfds: bool = False
    tfds_data_dir: str | None = None
    export_dir: str | None = None
    bilstm: bool = False

    def check(self) -> None:
        """Raises `InputError` naming the first flag whose value cannot work."""
        get_processor(self.task_name)
        self.check_runtime()
        if not (self.do_train or self.do_eval or self.do_predict or self.export_dir):
            raise InputError(
                "at least one of --do_train, --do_eval, --do_predict or --export_dir is needed"
            )
        if (
            not self.use_tfds
            and not self.data_dir
            and (self.do_train or self.do_eval or self.do_predict)
        ):
            raise InputError("--data_dir is required (or --use_tfds to read tensorflow-datasets)")
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


def read_examples(processor: DataProcessor, options: ClassifierOptions, split: str):
    """The examples of `split`, from the TSV files in --data_dir or from tensorflow-datasets."""
    if options.use_tfds:
        return tfds_examples(processor, split, options.tfds_data_dir)
    return processor.get_examples(options.data_dir, split)


def run_classifier(options: ClassifierOptions) -> dict:
    """Trains, evaluates and predicts as the options say; returns the eval metrics (or {}).

    Raises:
        InputError: bad options, data files or checkpoints (one clear line each).
        TrainingDiverged: the loss became NaN or infinite.
    """
    options.check()
    processor = get_processor(options.task_name)
    config, tokenizer = load_model_files(options)
    labels = None if processor.is_regression else processor.get_labels()
    regression = processor.is_regression

    # Reading the examples first: a bad file fails before any TensorFlow work.
    train_examples = read_examples(processor, options, "train") if options.do_train else []
    steps, warmup = train_schedule(len(train_examples), options)

    objective = Classification(
        len(labels or []),
        regression=regression,
        bilstm_units=config.hidden_size if options.bilstm else None,
    )
    trainer = build_trainer(
        options,
        objective,
        config,
        steps,
        warmup,
    )
    model = trainer.model
    chief = is_chief(trainer.strategy)

    if options.do_train:
        train_file = os.path.join(options.output_dir, "train.tf_record")
        if chief:
            features = convert_examples_to_features(
                train_examples, labels, options.max_seq_length, tokenizer
            )
            write_features(features, train_file)
        logger.info(
            "training %s: %d examples, batch %d, %d steps (%d warm-up), lr %g",
            processor.name,
            len(train_examples),
            options.train_batch_size,
            steps,
            warmup,
            options.learning_rate,
        )
        fine_tune(
            trainer,
            options,
            classifier_dataset(
                train_file,
                options.max_seq_length,
                options.train_batch_size,
                is_training=True,
                regression=regression,
                seed=options.seed,
            ),
            steps,
        )

    results: dict = {}
    if options.do_eval:
        eval_splits = [s for s in processor.splits() if s.startswith("dev")]
        for split in eval_splits:
            examples = read_examples(processor, options, split)
            outputs = _predict(
                trainer, examples, labels, options, tokenizer, split, options.eval_batch_size
            )
            prefix = "eval_" if split == "dev" else f"eval_{split.removeprefix('dev_')}_"
            split_results = evaluation_results(
                outputs,
                options.eval_batch_size,
                prefix,
                regression=processor.is_regression,
                metric_names=processor.metric_names,
            )
            if split == "dev":
                split_results["global_step"] = trainer.global_step
            results.update(split_results)
        logger.info("eval: %s", results)
        if chief:
            write_eval_results(os.path.join(options.output_dir, "eval_results.txt"), results)
            writer = tf.summary.create_file_writer(os.path.join(options.output_dir, "eval"))
            write_summaries(writer, results, trainer.global_step)

    if options.do_predict:
        test_splits = [s for s in processor.splits() if s.startswith("test")]
        if not test_splits:
            raise InputError(f"--do_predict: the {processor.name} task has no test set")
        for split in test_splits:
            examples = read_examples(processor, options, split)
            outputs = _predict(
                trainer, examples, labels, options, tokenizer, split, options.predict_batch_size
            )
            if chief:
                write_predictions(processor, examples, outputs, options.output_dir, split)

    if options.export_dir and chief:
        from bert_tf.serving import export_classifier  # TensorFlow Text only when exporting

        export_classifier(
            model,
            export_dir=options.export_dir,
            vocab_file=options.vocab_file,
            do_lower_case=options.do_lower_case,
            max_seq_length=options.max_seq_length,
            labels=labels,
            text_pairs=processor.is_pair,
        )
    return results


def _predict(
    trainer: Trainer,
    examples,
    labels,
    options: ClassifierOptions,
    tokenizer: FullTokenizer,
    split: str,
    batch_size: int,
) -> dict:
    """Logits [N, num_labels] and the per-example rows of the real examples, in order."""
    record_file = os.path.join(
        options.output_dir,
        {"dev": "eval.tf_record", "test": "predict.tf_record"}.get(split, f"{split}.tf_record"),
    )
    features = convert_examples_to_features(
        examples, labels, options.max_seq_length, tokenizer, pad_to_multiple_of=batch_size
    )
    if is_chief(trainer.strategy):
        write_features(features, record_file)
    logger.info("%s: %d examples (%d padding)", split, len(examples), len(features) - len(examples))
    dataset = classifier_dataset(
        record_file,
        options.max_seq_length,
        batch_size,
        is_training=False,
        regression=labels is None,
    )
    outputs = trainer.predict(dataset, ("logits", "label_ids", "is_real_example", "example_index"))
    order = np.argsort(outputs["example_index"], kind="stable")
    return {name: value[order] for name, value in outputs.items()}


def softmax(logits: np.ndarray) -> np.ndarray:
    """Probabilities [N, K] of logits [N, K]."""
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def evaluation_results(
    outputs: dict,
    batch_size: int,
    prefix: str = "eval_",
    regression: bool = False,
    metric_names: Sequence[str] = (),
) -> dict:
    """The original's eval keys (`eval_accuracy`, `eval_loss`, `loss`) plus the task's GLUE
    metrics (`metric_names`: `eval_f1`, `eval_mcc`, `eval_pearson`, `eval_spearmanr`), over
    real examples, from `outputs`' logits [N, K], label_ids [N] and is_real_example [N].

    `eval_loss` is the mean loss of the real examples; `loss` is the Estimator's: the mean
    over batches of each batch's mean loss (padding examples included, as the original)."""
    logits, labels = outputs["logits"], outputs["label_ids"]
    if regression:
        predictions = logits[:, 0]
        per_example = np.square(predictions - labels)
    else:
        log_probs = np.log(softmax(logits.astype(np.float64)))
        per_example = -log_probs[np.arange(len(labels)), labels]
        predictions = np.argmax(logits, axis=-1)
    real = outputs["is_real_example"].astype(bool)
    results = {}
    if not regression:
        results[f"{prefix}accuracy"] = float(np.mean(predictions[real] == labels[real]))
    results[f"{prefix}loss"] = float(np.mean(per_example[real]))
    metrics = task_metrics(metric_names, predictions[real], labels[real])
    results.update({f"{prefix}{name}": value for name, value in metrics.items()})
    if prefix == "eval_":
        # [num_batches, batch_size]: the eval files are padded to whole batches.
        results["loss"] = float(np.mean(per_example.reshape(-1, batch_size).mean(axis=1)))
    return results


def write_predictions(
    processor: DataProcessor, examples, outputs: dict, output_dir: str, split: str
) -> None:
    """test_results.tsv (as the original: each real example's class probabilities,
    tab-separated; the score for regression) and the GLUE submission file
    (`index<TAB>prediction`, the label names GLUE expects), e.g. MRPC.tsv."""
    logits = outputs["logits"][outputs["is_real_example"].astype(bool)]
    suffix = split.removeprefix("test").removeprefix("_")
    results_file = f"test_results_{suffix}.tsv" if suffix else "test_results.tsv"
    if processor.is_regression:
        values = logits[:, :1]
        predictions = [f"{v:.3f}" for v in logits[:, 0]]
    else:
        values = softmax(logits.astype(np.float64))
        names = processor.get_labels()
        predictions = [names[i] for i in np.argmax(logits, axis=-1)]
    write_test_results(os.path.join(output_dir, results_file), values)
    submission = glue_submission_name(processor, split)
    if submission:
        with atomic_open(os.path.join(output_dir, submission)) as f:
            f.write("index\tprediction\n")
            for example, prediction in zip(examples, predictions, strict=True):
                f.write(f"{example.index}\t{prediction}\n")
    logger.info(
        "predictions of %d examples in %s%s",
        len(examples),
        results_file,
        f" and {submission}" if submission else "",
    )


def write_test_results(path: str, values: np.ndarray) -> None:
    """The original's test_results.tsv: one line per real example, its values [K]
    (probabilities or the score) tab-separated."""
    with atomic_open(path) as f:
        for row in values:
            f.write("\t".join(str(float(v)) for v in row) + "\n")


def glue_submission_name(processor: DataProcessor, split: str) -> str | None:
    """The file name the GLUE leaderboard expects for the task's test predictions."""
    if processor.name == "XNLI":
        return None
    if processor.name == "MNLI-m":
        return "MNLI-mm.tsv" if split == "test_mismatched" else "MNLI-m.tsv"
    return f"{processor.name}.tsv"
