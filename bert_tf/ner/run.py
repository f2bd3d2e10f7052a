"""Fine-tuning (or feature-based training) on CoNLL-2003 and tagging: what run_ner.py runs.

`NerOptions` holds the flags; `run_ner(options)` trains on the train file, evaluates on the
dev file (--do_eval) and tags the test file (--do_predict), writing to output_dir:
train/eval/predict.tf_record, the checkpoints, labels.txt (the label set, kept with the
model), `{eval,test}_predictions.txt` (the file's lines with the predicted tag appended, in
the file's scheme: what conlleval reads), `{eval,test}_conlleval.txt` (conlleval's report)
and `{eval,test}_results.txt` (precision, recall, f1 overall and per type, as conlleval
computes them, plus the loss and the global step).
"""

from __future__ import annotations

import dataclasses
import logging
import os

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
from bert_tf.modeling.token_classifier import FEATURES
from bert_tf.ner import conlleval
from bert_tf.ner.data import (
    ConllFile,
    check_tags,
    find_split_file,
    label_list,
    read_conll_file,
    tfds_conll2003,
)
from bert_tf.ner.features import InputFeatures, convert_documents_to_features, write_features
from bert_tf.ner.objective import TokenClassification, ner_dataset
from bert_tf.training import Trainer, write_eval_results, write_summaries

logger = logging.getLogger(__name__)

LABELS_FILE = "labels.txt"
# The split -> (record file, prefix of the output files and metrics).
SPLIT_OUTPUTS = {
    "train": ("train.tf_record", "train"),
    "dev": ("eval.tf_record", "eval"),
    "test": ("predict.tf_record", "test"),
}


@dataclasses.dataclass
class NerOptions(RuntimeOptions):
    """run_ner.py's flags: those of run_classifier.py where they mean the same, and the
    NER ones; the TPU and runtime flags are `RuntimeOptions`'."""

    data_dir: str | None
    bert_config_file: str
    vocab_file: str
    output_dir: str
    init_checkpoint: str | None = None
    do_lower_case: bool = True
    max_seq_length: int = 128
    doc_stride: int = 64
    document_context: bool = True
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
    feature_based: str | None = None
    lstm_units: int = 768
    use_tfds: bool = False
    tfds_data_dir: str | None = None
    export_dir: str | None = None

    def check(self) -> None:
        """Raises `InputError` naming the first flag whose value cannot work."""
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
            "doc_stride",
            "train_batch_size",
            "eval_batch_size",
            "predict_batch_size",
            "save_checkpoints_steps",
            "iterations_per_loop",
            "lstm_units",
        )
        if self.max_seq_length < 3:
            raise InputError(f"--max_seq_length={self.max_seq_length}; expected at least 3")
        if self.feature_based is not None and self.feature_based not in FEATURES:
            raise InputError(
                f"--feature_based={self.feature_based}; expected one of {', '.join(FEATURES)} "
                "(or unset to fine-tune)"
            )
        check_schedule(self)


def read_split(options: NerOptions, split: str) -> ConllFile:
    """The CoNLL file of `split` (train, dev, test) from --data_dir or tensorflow-datasets."""
    if options.use_tfds:
        return tfds_conll2003(split, options.tfds_data_dir)
    return read_conll_file(find_split_file(options.data_dir, split))


def resolve_labels(options: NerOptions, train: ConllFile | None) -> tuple[list[str], str]:
    """The label set and where it comes from: the training file's entity types when
    training (checked against an earlier run's labels.txt in output_dir), else
    output_dir/labels.txt, else --init_checkpoint's directory's labels.txt.

    Raises:
        InputError: the training file's tags differ from the earlier run's, or no label set
            is found.
    """
    saved_files = [os.path.join(options.output_dir, LABELS_FILE)]
    if options.init_checkpoint:
        saved_files.append(os.path.join(_checkpoint_dir(options.init_checkpoint), LABELS_FILE))
    saved_file = next((path for path in saved_files if os.path.isfile(path)), None)
    saved = None
    if saved_file:
        with open(saved_file, encoding="utf-8") as f:
            saved = [line.strip() for line in f if line.strip()]
    if train is not None:
        labels = label_list(train.entity_types())
        if saved is not None and saved_file == saved_files[0] and saved != labels:
            raise InputError(
                f"{train.source}: its tags ({' '.join(labels)}) differ from the tags the model "
                f"in --output_dir was trained on ({saved_file}: {' '.join(saved)}); use "
                "another --output_dir"
            )
        return labels, train.source
    if saved is None:
        raise InputError(
            f"no {LABELS_FILE} in --output_dir={options.output_dir}"
            + (" or beside --init_checkpoint" if options.init_checkpoint else "")
            + ": the label set is written there when the model is trained (--do_train)"
        )
    return saved, saved_file


def _checkpoint_dir(checkpoint: str) -> str:
    return checkpoint if os.path.isdir(checkpoint) else os.path.dirname(checkpoint)


def run_ner(options: NerOptions) -> dict:
    """Trains, evaluates and tags as the options say; returns the metrics (or {}).

    Raises:
        InputError: bad options, data files or checkpoints (one clear line each).
        TrainingDiverged: the loss became NaN or infinite.
    """
    options.check()
    config, tokenizer = load_model_files(options)

    # Every file is read and checked first: a bad file fails before any TensorFlow work.
    train = read_split(options, "train") if options.do_train else None
    labels, labels_source = resolve_labels(options, train)
    splits = {"train": train} if train else {}
    for split, wanted in (("dev", options.do_eval), ("test", options.do_predict)):
        if wanted:
            splits[split] = read_split(options, split)
            check_tags(splits[split], labels, labels_source)
    features = {
        split: list(
            convert_documents_to_features(
                conll.documents,
                labels,
                tokenizer,
                options.max_seq_length,
                options.doc_stride,
                options.document_context,
            )
        )
        for split, conll in splits.items()
    }
    steps, warmup = train_schedule(len(features.get("train", [])), options)

    trainer = build_trainer(
        options,
        TokenClassification(len(labels), options.feature_based, options.lstm_units),
        config,
        steps,
        warmup,
    )
    chief = is_chief(trainer.strategy)

    if options.do_train:
        train_file = os.path.join(options.output_dir, SPLIT_OUTPUTS["train"][0])
        if chief:
            atomic_write_text(
                os.path.join(options.output_dir, LABELS_FILE), "".join(f"{x}\n" for x in labels)
            )
            write_features(features["train"], train_file)
        logger.info(
            "training%s: %d sentences, %d windows, batch %d, %d steps (%d warm-up), lr %g",
            f" a BiLSTM on frozen BERT's {options.feature_based}" if options.feature_based else "",
            len(train.sentences),
            len(features["train"]),
            options.train_batch_size,
            steps,
            warmup,
            options.learning_rate,
        )
        fine_tune(
            trainer,
            options,
            ner_dataset(
                train_file,
                options.max_seq_length,
                options.train_batch_size,
                is_training=True,
                seed=options.seed,
            ),
            steps,
        )

    results: dict = {}
    for split in ("dev", "test"):
        if split not in splits:
            continue
        batch_size = options.eval_batch_size if split == "dev" else options.predict_batch_size
        predictions, loss = predict_tags(
            trainer, features[split], labels, splits[split], options, split, batch_size
        )
        if chief:
            results.update(
                write_outputs(splits[split], predictions, loss, trainer, options.output_dir, split)
            )

    if options.export_dir and chief:
        from bert_tf.ner.serving import export_ner  # TensorFlow Text only when exporting

        export_ner(trainer.model, labels, options)
    return results


def predict_tags(
    trainer: Trainer,
    features: list[InputFeatures],
    labels: list[str],
    conll: ConllFile,
    options: NerOptions,
    split: str,
    batch_size: int,
) -> tuple[list[list[str]], float]:
    """The IOB2 tags predicted for every sentence of `conll`, and the mean loss over its
    words."""
    record_file = os.path.join(options.output_dir, SPLIT_OUTPUTS[split][0])
    if is_chief(trainer.strategy):
        write_features(features, record_file, pad_to_multiple_of=batch_size)
    logger.info(
        "tagging %s: %d sentences, %d windows", conll.source, len(conll.sentences), len(features)
    )
    outputs = trainer.predict(
        ner_dataset(record_file, options.max_seq_length, batch_size, is_training=False),
        ("logits", "example_index"),
    )
    logits = outputs["logits"][np.argsort(outputs["example_index"], kind="stable")]
    log_probs = logits.astype(np.float64)
    log_probs -= log_probs.max(-1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))  # [N, S, L]
    sentences = conll.sentences
    predictions = [[None] * len(s.words) for s in sentences]
    nll = []
    label_id = {label: i for i, label in enumerate(labels)}
    for feature, window in zip(features, log_probs, strict=False):
        for position, (sentence, word) in feature.word_at.items():
            predictions[sentence][word] = labels[int(np.argmax(window[position]))]
            nll.append(-window[position, label_id[sentences[sentence].tags[word]]])
    missing = [
        (i, w) for i, tags in enumerate(predictions) for w, t in enumerate(tags) if t is None
    ]
    assert not missing, f"words without a prediction: {missing[:5]}"
    return predictions, float(np.mean(nll)) if nll else 0.0


def prediction_lines(conll: ConllFile, predicted: list[list[str]]) -> list[str]:
    """The file's lines with the predicted tag appended (conlleval's input: word ... gold
    guess), -DOCSTART- lines (guess O) and blank lines as in a CoNLL file."""
    lines = []
    tags = iter(predicted)
    for document in conll.documents:
        if document.docstart:
            lines += [" ".join([*document.docstart, "O"]) + "\n", "\n"]
        for sentence in document.sentences:
            for columns, tag in zip(sentence.columns, next(tags), strict=True):
                lines.append(" ".join([*columns, tag]) + "\n")
            lines.append("\n")
    return lines


def write_outputs(
    conll: ConllFile,
    predictions: list[list[str]],
    loss: float,
    trainer: Trainer,
    output_dir: str,
    split: str,
) -> dict:
    """Writes the split's predictions (CoNLL format), conlleval's report and the results;
    returns the results."""
    prefix = SPLIT_OUTPUTS[split][1]
    lines = prediction_lines(conll, [conll.to_file_scheme(tags) for tags in predictions])
    atomic_write_text(os.path.join(output_dir, f"{prefix}_predictions.txt"), "".join(lines))
    # Scored from the lines written: the report is what conlleval prints for that file
    # (its -DOCSTART- lines count as tokens, as in the shared task's evaluation).
    result = conlleval.evaluate_lines(lines)
    report = conlleval.report(result)
    atomic_write_text(os.path.join(output_dir, f"{prefix}_conlleval.txt"), report)
    metrics = {f"{prefix}_{name}": value for name, value in conlleval.metrics(result).items()}
    metrics[f"{prefix}_loss"] = loss
    metrics["global_step"] = trainer.global_step
    write_eval_results(os.path.join(output_dir, f"{prefix}_results.txt"), metrics)
    write_summaries(
        tf.summary.create_file_writer(os.path.join(output_dir, prefix)),
        metrics,
        trainer.global_step,
    )
    logger.info("%s (%s):\n%s", conll.source, split, report)
    print(
        f"{split}: "
        + ", ".join(
            f"{k}={metrics[k]:.4g}"
            for k in (f"{prefix}_precision", f"{prefix}_recall", f"{prefix}_f1")
        )
    )
    return metrics
