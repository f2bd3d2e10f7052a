"""SQuAD 1.1 and 2.0 as a fine-tuning task: what run_squad.py runs.

    results = run_squad(SquadOptions(train_file=..., predict_file=..., do_train=True, ...))

Writes to output_dir, as the original: train.tf_record, eval.tf_record, the checkpoints,
predictions.json, nbest_predictions.json, null_odds.json (SQuAD 2.0), and, when the predict
file has answers, eval_results.json with the official evaluation's numbers.
"""

from __future__ import annotations

import numpy as np

from bert_tf.config import BertConfig
from bert_tf.finetuning.driver import run_task
from bert_tf.finetuning.task import Predictions, Task
from bert_tf.io.tfrecord import RecordSchema
from bert_tf.squad import evaluate
from bert_tf.squad.data import (
    count_questions,
    read_squad_examples,
    read_squad_file,
    tfds_squad,
)
from bert_tf.squad.features import (
    convert_examples_to_features,
    record_schema,
    record_values,
)
from bert_tf.squad.objective import SpanExtraction
from bert_tf.squad.options import SquadOptions
from bert_tf.squad.postprocess import (
    NBEST_FILE,
    NULL_ODDS_FILE,
    PREDICTIONS_FILE,
    RawResult,
    compute_predictions,
    write_predictions,
)

# What the exported model needs of the options to featurize and post-process as the run did.
EXPORT_SETTINGS = (
    "vocab_file", "do_lower_case", "max_seq_length", "doc_stride", "max_query_length",
    "n_best_size", "max_answer_length", "version_2_with_negative", "null_score_diff_threshold",
)  # fmt: skip


class SquadTask(Task):
    """SQuAD's JSON files (or tensorflow-datasets' squad), a start and an end classifier on
    every position, the best spans as answers and the official evaluation."""

    name = "SQuAD"
    output_names = ("unique_ids", "start_logits", "end_logits")
    # The predict file is read as the "dev" split, into the original's eval.tf_record.
    record_files = {"train": "train.tf_record", "dev": "eval.tf_record"}
    results_files = {"dev": "eval_results.json"}
    # As the original: the training examples are shuffled once, with this seed, before they
    # are written.
    train_shuffle_seed = 12345

    def prediction_splits(self) -> dict[str, int]:
        return {"dev": self.options.predict_batch_size} if self.options.do_predict else {}

    def read(self, split: str):
        options, is_training = self.options, split == "train"
        if options.use_tfds:
            name = "squad/v2.0" if options.version_2_with_negative else "squad/v1.1"
            tfds_split = "train" if is_training else "validation"
            dataset = tfds_squad(name, tfds_split, options.tfds_data_dir)
            source = f"{name}[{tfds_split}]"
        else:
            source = options.train_file if is_training else options.predict_file
            dataset = read_squad_file(source)
        examples = read_squad_examples(
            dataset, source, is_training, options.version_2_with_negative
        )
        if is_training:
            questions = count_questions(dataset)
            if len(examples) < questions:
                self.read_notes.append(
                    f"{source}: {questions - len(examples)} of {questions} training questions "
                    "skipped: their answer text is not at answer_start in the context's words "
                    "(as the original)"
                )
        return examples

    def objective(self, config: BertConfig) -> SpanExtraction:
        return SpanExtraction(bilstm_units=config.hidden_size if self.options.bilstm else None)

    def features(self, examples, split, tokenizer):
        return convert_examples_to_features(
            examples,
            tokenizer,
            self.options.max_seq_length,
            self.options.doc_stride,
            self.options.max_query_length,
            is_training=split == "train",
        )

    def record_schema(self, is_training: bool) -> RecordSchema:
        return record_schema(self.options.max_seq_length, is_training)

    def record_values(self, feature, is_training: bool) -> dict:
        return record_values(feature)

    def output_files(self, split: str) -> list[str]:
        return [PREDICTIONS_FILE, NBEST_FILE, NULL_ODDS_FILE]

    def evaluate(self, split: str, examples, features, predictions: Predictions) -> dict:
        """Writes the prediction files; the official evaluation when the examples have
        answers (else {}: a test file)."""
        options = self.options
        results = [
            RawResult(int(unique_id), start, end)
            for unique_id, start, end in zip(
                predictions.real("unique_ids"),
                predictions.real("start_logits").astype(np.float32),
                predictions.real("end_logits").astype(np.float32),
                strict=True,
            )
        ]
        answers, nbest, null_odds = compute_predictions(
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
        v2 = options.version_2_with_negative
        write_predictions(options.output_dir, answers, nbest, null_odds if v2 else None)
        gold = {example.qas_id: example.answers for example in examples}
        if not any(gold.values()):
            return {}
        if v2:
            # As `evaluate-v2.0.py predict_file predictions.json --na-prob-file null_odds.json`.
            return evaluate.evaluate_v2(gold, answers, na_probs=null_odds)
        return evaluate.evaluate_v1(gold, answers)

    def export(self, model, export_dir: str) -> None:
        from bert_tf.squad.serving import export_squad  # TensorFlow Text only when exporting

        export_squad(
            model, export_dir, **{name: getattr(self.options, name) for name in EXPORT_SETTINGS}
        )


def run_squad(options: SquadOptions) -> dict:
    """Trains and predicts as the original's run_squad.py; returns the evaluation (or {})."""
    return run_task(SquadTask(options))
