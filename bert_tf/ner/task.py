"""CoNLL-2003 named-entity recognition as a fine-tuning task: what run_ner.py runs, fine-tuned
or feature-based (paper Sec. 5.3, Table 7).

    results = run_ner(NerOptions(data_dir=..., do_train=True, do_eval=True, ...))

Trains on the train file, evaluates on the dev file (--do_eval) and tags the test file
(--do_predict), writing to output_dir: train/eval/predict.tf_record, the checkpoints,
labels.txt (the label set, kept with the model), `{eval,test}_predictions.txt` (the file's
lines with the predicted tag appended, in the file's scheme: what conlleval reads),
`{eval,test}_conlleval.txt` (conlleval's report) and `{eval,test}_results.txt` (precision,
recall, f1 overall and per type, as conlleval computes them, plus the loss and the global
step).
"""

from __future__ import annotations

import os

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.finetuning import (
    DataDirOptions,
    FineTuningOptions,
    TfdsOptions,
    run_task,
)
from bert_tf.modeling.token_classifier import FEATURES
from bert_tf.ner import results
from bert_tf.ner.data import (
    ConllFile,
    check_tags,
    find_split_file,
    label_list,
    read_conll_file,
    tfds_conll2003,
)
from bert_tf.ner.features import (
    convert_documents_to_features,
    feature_spec,
    padding_record,
    serialize_features,
)
from bert_tf.ner.objective import TokenClassification
from bert_tf.options import one_of, option, options, positive, redefault
from bert_tf.runtime import EvalOptions
from bert_tf.task import Predictions, Task

LABELS_FILE = "labels.txt"


@options
class NerOptions(FineTuningOptions, EvalOptions, DataDirOptions, TfdsOptions):
    """run_ner.py's flags: those of run_classifier.py where they mean the same, and NER's."""

    data_dir: str | None = redefault(
        None,
        "The CoNLL-2003 directory: train.txt, valid.txt, test.txt (or eng.train, eng.testa, "
        "eng.testb).",
    )
    do_lower_case: bool = redefault(
        True,
        "Whether to lower case the input text. Should be True for uncased models and False "
        "for cased models (the paper's NER results use cased models).",
    )
    max_seq_length: int = redefault(
        128,
        "The maximum total input sequence length after WordPiece tokenization; documents (or "
        "sentences) that are longer are split into overlapping windows, never truncated.",
    )
    do_train: bool = redefault(False, "Whether to run training (on the train file).")
    do_eval: bool = redefault(False, "Whether to run eval on the dev set (valid.txt).")
    do_predict: bool = redefault(False, "Whether to tag (and score) the test set (test.txt).")
    doc_stride: int = option(
        64,
        "When a document is longer than a window, how far apart (in WordPiece tokens) windows "
        "start; each word is predicted from the window where it has the most context.",
        positive,
    )
    document_context: bool = option(
        True,
        "Fill each window with as much of the document as fits (the paper's maximal document "
        "context); false: each sentence alone.",
    )
    feature_based: str | None = option(
        None,
        "Feature-based (paper Table 7): train a two-layer BiLSTM and the classifier on these "
        f"frozen BERT activations instead of fine-tuning BERT: one of {', '.join(FEATURES)}.",
        one_of(*FEATURES, unset="to fine-tune"),
    )
    lstm_units: int = option(
        768, "Feature-based: each direction's size of the two-layer BiLSTM.", positive
    )
    use_tfds: bool = redefault(
        False,
        "Read tensorflow-datasets' conll2003, prepared beforehand (train, dev, test), instead "
        "of --data_dir.",
    )
    export_dir: str | None = redefault(
        None,
        "Also write a SavedModel for TF Serving here: raw text in, entities with character "
        "offsets out (and the ids signature).",
    )


class NerTask(Task):
    """CoNLL column files (or tensorflow-datasets' conll2003), a tag per word from its first
    piece, conlleval's scores."""

    output_names = ("logits",)
    results_files = {"dev": "eval_results.txt", "test": "test_results.txt"}
    labels: list[str] = []

    @property
    def name(self) -> str:
        feature = self.options.feature_based
        return "CoNLL-2003" + (f" (a BiLSTM on frozen BERT's {feature})" if feature else "")

    def read(self, split: str) -> ConllFile:
        if self.options.use_tfds:
            return tfds_conll2003(split, self.options.tfds_data_dir)
        return read_conll_file(find_split_file(self.options.data_dir, split))

    def prepare(self, examples: dict) -> None:
        self.labels, source = resolve_labels(
            self.options.output_dir, self.options.init_checkpoint, examples.get("train")
        )
        for split in ("dev", "test"):
            if split in examples:
                check_tags(examples[split], self.labels, source)

    def objective(self, config: BertConfig) -> TokenClassification:
        return TokenClassification(
            len(self.labels), self.options.feature_based, self.options.lstm_units
        )

    def model_files(self) -> dict[str, str]:
        return {LABELS_FILE: "".join(f"{label}\n" for label in self.labels)}

    def features(self, conll: ConllFile, split, tokenizer):
        return list(
            convert_documents_to_features(
                conll.documents,
                self.labels,
                tokenizer,
                self.options.max_seq_length,
                self.options.doc_stride,
                self.options.document_context,
            )
        )

    def training_instances(self, examples, features) -> int:
        return len(features)  # an epoch is every window once

    def serialize(self, feature, is_training: bool) -> bytes:
        return serialize_features(feature)

    def padding(self) -> bytes:
        return padding_record(self.options.max_seq_length)

    def record_spec(self, is_training: bool) -> dict:
        return feature_spec(self.options.max_seq_length)

    def output_files(self, split: str) -> list[str]:
        return results.output_files(split)

    def evaluate(self, split: str, conll, features, predictions: Predictions) -> dict:
        tags, loss = results.predict_tags(predictions.real("logits"), features, self.labels, conll)
        return results.write_outputs(conll, tags, loss, self.options.output_dir, split)

    def export(self, model, export_dir: str) -> None:
        from bert_tf.ner.serving import export_ner  # TensorFlow Text only when exporting

        export_ner(
            model,
            export_dir,
            vocab_file=self.options.vocab_file,
            do_lower_case=self.options.do_lower_case,
            labels=self.labels,
            max_seq_length=self.options.max_seq_length,
            doc_stride=self.options.doc_stride,
        )


def resolve_labels(
    output_dir: str, init_checkpoint: str | None, train: ConllFile | None
) -> tuple[list[str], str]:
    """The label set and where it comes from: the training file's entity types when
    training (checked against an earlier run's labels.txt in output_dir), else
    output_dir/labels.txt, else the labels.txt beside init_checkpoint.

    Raises:
        InputError: the training file's tags differ from the earlier run's, or no label set
            is found.
    """
    saved_files = [os.path.join(output_dir, LABELS_FILE)]
    if init_checkpoint:
        directory = (
            init_checkpoint if os.path.isdir(init_checkpoint) else os.path.dirname(init_checkpoint)
        )
        saved_files.append(os.path.join(directory, LABELS_FILE))
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
            f"no {LABELS_FILE} in --output_dir={output_dir}"
            + (" or beside --init_checkpoint" if init_checkpoint else "")
            + ": the label set is written there when the model is trained (--do_train)"
        )
    return saved, saved_file


def run_ner(options: NerOptions) -> dict:
    """Trains, evaluates and tags as the options say; returns the metrics (or {})."""
    return run_task(NerTask(options))
