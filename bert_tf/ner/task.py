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

from bert_tf.config import BertConfig
from bert_tf.finetuning.driver import run_task
from bert_tf.finetuning.task import Predictions, Task
from bert_tf.io.tfrecord import RecordSchema
from bert_tf.ner import results
from bert_tf.ner.data import (
    ConllFile,
    check_tags,
    find_split_file,
    read_conll_file,
    resolve_labels,
    tfds_conll2003,
)
from bert_tf.ner.features import (
    convert_documents_to_features,
    record_schema,
    record_values,
)
from bert_tf.ner.objective import TokenClassification
from bert_tf.ner.options import NerOptions


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
            self.output_source, self.init_source, examples.get("train")
        )
        for split in ("dev", "test"):
            if split in examples:
                check_tags(examples[split], self.labels, source)

    def objective(self, config: BertConfig) -> TokenClassification:
        return TokenClassification(
            len(self.labels), self.options.feature_based, self.options.lstm_units
        )

    def model_labels(self) -> list[str]:
        return self.labels

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

    def record_schema(self, is_training: bool) -> RecordSchema:
        return record_schema(self.options.max_seq_length)

    def record_values(self, feature, is_training: bool) -> dict:
        return record_values(feature)

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


def run_ner(options: NerOptions) -> dict:
    """Trains, evaluates and tags as the options say; returns the metrics (or {})."""
    return run_task(NerTask(options))
