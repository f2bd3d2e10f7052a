"""One driver for every fine-tuning task (`bert_tf.finetuning.task.Task`): `run_task(task)` does
what run_classifier.py, run_squad.py, run_ner.py and run_swag.py share, once.

1. The options checked; bert_config.json and the vocab read and checked against each other.
2. Every split read and turned into features before any TensorFlow work (a bad file fails
   fast); the schedule as the original's: `int(examples / batch * epochs)` steps, a
   `warmup_proportion` of them warming up.
3. The strategy, and the task's model in a `Trainer`: resumed from output_dir, else started
   from --init_checkpoint.
4. --do_train: the training records written by the chief (every worker waits for them), then
   trained with the original's optimizer.
   The output_dir becomes a model directory: bert_config.json, vocab.txt and task_model.json
   (the head and its settings) beside the checkpoints, and the task's files (its labels).
5. --do_eval / --do_predict: each split's records (padded to whole batches), the model's
   outputs in record order, and the task's metrics and files; the metrics in
   `eval_results.txt` (or the task's results file) and TensorBoard, on the chief.
6. --export_dir: the task's SavedModel, on the chief.

The options every task shares are `bert_tf.finetuning.options.FineTuningOptions`; a task's options
class adds its own.
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import random

import numpy as np

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.finetuning.input_pipeline import record_dataset
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.finetuning.task import Predictions, Task
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text, check_writable_folder
from bert_tf.io.tfrecord import write_records
from bert_tf.model_io.saving import save_model_directory
from bert_tf.model_io.source import ModelSource, model_do_lower_case
from bert_tf.options import check_options
from bert_tf.serving.cpu import bfloat16_warning, this_cpu
from bert_tf.tokenization import FullTokenizer, require_tokens
from bert_tf.training.checkpoints import check_checkpoint_folder
from bert_tf.training.distribute import barrier, input_seed, is_chief, make_strategy
from bert_tf.training.evaluation import predict
from bert_tf.training.loop import Trainer
from bert_tf.training.setup import build_trainer, train
from bert_tf.training.summaries import summary_writer, write_eval_results, write_summaries

logger = logging.getLogger(__name__)


def run_task(task: Task) -> dict:
    """Trains, evaluates, predicts and exports as `task.options` say; returns the metrics
    recorded (with the global step), or {}.

    Raises:
        InputError: bad options, data files or checkpoints (one clear line each).
        TrainingDiverged: the loss became NaN or infinite.
    """
    options = task.options
    check_options(options)
    check_writable_folder(options.output_dir, "--output_dir")
    check_checkpoint_folder(options.output_dir, "--output_dir")
    # Before anything is read from output_dir (NER's labels.txt, say): whose model it holds.
    task.output_source = ModelSource(options.output_dir)
    task.output_source.check_task(task.name)
    if options.export_dir:
        from bert_tf.serving.export import check_export_dir  # TensorFlow Text only when exporting

        check_export_dir(options.export_dir, options.output_dir)
    # --init_checkpoint resolved once: its casing, attention, labels, class and weights.
    task.init_source = ModelSource(options.init_checkpoint) if options.init_checkpoint else None
    config, tokenizer = load_model_files(options, task.init_source, task.output_source)
    splits = task.prediction_splits()
    examples = {
        split: task.read(split) for split in (["train"] if options.do_train else []) + list(splits)
    }
    task.prepare(examples)
    if options.do_train and task.train_shuffle_seed is not None:
        random.Random(task.train_shuffle_seed).shuffle(examples["train"])
    # Training features may be lazy (written to the records one at a time, by the chief);
    # those predicted are kept to make the outputs results.
    features = {split: task.features(examples[split], split, tokenizer) for split in examples}
    features.update({split: list(features[split]) for split in splits})
    train_instances = (
        task.training_instances(examples["train"], features["train"]) if options.do_train else 0
    )
    steps, warmup = train_schedule(
        train_instances, options.train_batch_size, options.num_train_epochs,
        options.warmup_proportion, options.do_train,
    )  # fmt: skip

    strategy = make_strategy(options)  # the first TensorFlow work
    settings = options.trainer_settings()
    trainer = build_trainer(
        strategy, task.objective(config), config, steps, warmup, settings,
        task.init_source, task.model_labels(),
    )  # fmt: skip
    task.output_source.check_same_model(trainer.model, options.do_lower_case, options.vocab_file)
    if options.do_train:
        _train(task, trainer, settings, examples["train"], features["train"], (steps, warmup))
    results = _evaluate(task, trainer, splits, examples, features)
    if options.export_dir and is_chief(strategy):
        from bert_tf.serving.export import model_in_dtype  # TensorFlow Text only when exporting

        if options.export_dtype == "bfloat16" and (warning := bfloat16_warning(this_cpu())):
            logger.warning("%s", warning)
        task.export(model_in_dtype(trainer.model, options.export_dtype), options.export_dir)
    for note in task.read_notes:
        logger.warning("%s", note)
    return results


def _train(task: Task, trainer: Trainer, settings, examples, features, schedule) -> None:
    """Makes output_dir a model directory (on the chief), writes the training records and
    trains to `steps`."""
    options, (steps, warmup) = task.options, schedule
    if is_chief(trainer.strategy):
        # bert_config.json, vocab.txt and the task model's description beside the
        # checkpoints make output_dir a model directory (`BertClassifier.from_pretrained`,
        # scripts/convert_checkpoint.py).
        save_model_directory(
            options.output_dir, trainer.model, options.vocab_file, options.do_lower_case,
            task.model_labels(), task.name, weights=False,
        )  # fmt: skip
    path, count = _records(task, trainer, "train", features)
    logger.info(
        "training %s: %d examples (%d records), batch %d, %d steps (%d warm-up), lr %g",
        task.name, len(examples), count, options.train_batch_size, steps, warmup,
        options.learning_rate,
    )  # fmt: skip
    seed = input_seed(options.seed, trainer.strategy)
    dataset = record_dataset(
        path, task.record_schema(True).spec(), options.train_batch_size, True, seed
    )
    train(trainer, settings, dataset, steps)


def _evaluate(task: Task, trainer: Trainer, splits: dict, examples: dict, features: dict) -> dict:
    """Each split's predictions turned into the task's metrics and files; the metrics written
    to the task's results files (and summaries) on the chief. Returns them."""
    output_dir = task.options.output_dir
    chief = is_chief(trainer.strategy)
    if chief:
        # A failed run must not leave an earlier run's files beside (or as) its own.
        for split in splits:
            stale = task.output_files(split) + [task.results_files.get(split, "")]
            for name in filter(None, stale):
                with contextlib.suppress(FileNotFoundError):
                    filesystem.remove(os.path.join(output_dir, name))
    recorded = collections.defaultdict(dict)
    for split, batch_size in splits.items():
        logger.info(
            "%s: %d examples, %d records: the model of step %d predicts them (the first "
            "batch builds the graph)",
            split, len(examples[split]), len(features[split]), trainer.global_step,
        )  # fmt: skip
        path, _ = _records(task, trainer, split, features[split], batch_size)
        dataset = record_dataset(
            path, task.record_schema(False).spec(), batch_size, is_training=False
        )
        outputs = predict(trainer, dataset, (*task.output_names, "example_index"), split)
        order = np.argsort(outputs["example_index"], kind="stable")
        predictions = Predictions({k: v[order] for k, v in outputs.items()}, len(features[split]))
        if chief:
            metrics = task.evaluate(split, examples[split], features[split], predictions)
            if metrics and split in task.results_files:
                recorded[task.results_files[split]].update(metrics)
    results = {}
    for name, metrics in recorded.items():
        if name.endswith(".txt"):
            metrics["global_step"] = trainer.global_step
            write_eval_results(os.path.join(output_dir, name), metrics)
        else:
            atomic_write_text(os.path.join(output_dir, name), json.dumps(metrics, indent=2) + "\n")
        logger.info("%s: %s", name, metrics)
        with summary_writer(trainer.strategy, output_dir, name.split("_")[0]) as writer:
            write_summaries(writer, metrics, trainer.global_step)
        results.update(metrics)
    return results


def _records(task: Task, trainer: Trainer, split: str, features, batch_size: int = 0):
    """Writes the split's records on the chief (eval and predict files padded to whole
    batches of `batch_size`); every worker waits until they are whole. Returns the file's path
    and its count of real records (on the chief; 0 elsewhere)."""
    path = os.path.join(task.options.output_dir, task.record_files.get(split, f"{split}.tf_record"))
    count = 0
    if is_chief(trainer.strategy):
        is_training = split == "train"
        schema = task.record_schema(is_training)
        count = write_records(
            path,
            (schema.encode(task.record_values(feature, is_training)) for feature in features),
            padding=None if is_training else schema.padding(),
            pad_to_multiple_of=batch_size or 1,
        )
    barrier(trainer.strategy)
    return path, count


def train_schedule(
    num_examples: int,
    train_batch_size: int,
    num_train_epochs: float,
    warmup_proportion: float,
    do_train: bool = True,
) -> tuple[int, int]:
    """(num_train_steps, num_warmup_steps) as the original: `int(examples / batch * epochs)`
    and `int(steps * warmup_proportion)`.

    Raises:
        InputError: training (`do_train`) that would make no step.
    """
    steps = int(num_examples / train_batch_size * num_train_epochs)
    if do_train and steps < 1:
        raise InputError(
            f"{num_examples} training examples at --train_batch_size={train_batch_size} and "
            f"--num_train_epochs={num_train_epochs} make no training step"
        )
    return steps, int(steps * warmup_proportion)


def load_model_files(
    options: FineTuningOptions, source: ModelSource | None = None, output: ModelSource | None = None
) -> tuple[BertConfig, FullTokenizer]:
    """The model's bert_config.json and vocab, checked against each other and the options
    (the casing decided from `source`, --init_checkpoint's files, name and vocab, and the
    flag; max_seq_length against the positions); a checkpoint pre-trained left to right
    keeps its causal attention, and a rerun in an output_dir that holds a checkpoint takes the
    config it was fine-tuned with."""
    # Decided once, from the model's files, name and vocab and the flag: every task's
    # tokenizer, records, task_model.json and export take this value.
    options.do_lower_case = model_do_lower_case(source, options.do_lower_case, options.vocab_file)
    config = BertConfig.from_json_file(options.bert_config_file)
    config.check_sequence_length(options.max_seq_length, options.bert_config_file)
    tokenizer = FullTokenizer(options.vocab_file, do_lower_case=options.do_lower_case)
    require_tokens(tokenizer.vocab, options.vocab_file, ("[CLS]", "[SEP]"))
    config.check_vocab(len(tokenizer.vocab), options.vocab_file)
    if source is not None:
        config = source.with_attention(config)
    output = output or ModelSource(options.output_dir)
    config = output.trained_config(config, options.bert_config_file)
    return config, tokenizer
