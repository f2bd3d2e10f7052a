"""A new fine-tuning task is its hooks and nothing else: `Pets`, written here as
docs/adding_a_task.md shows, says whether a sentence names a pet; `run_task` does the
rest (checks, model files, schedule, trainer, records, training, results, summaries) as it
does for GLUE, SQuAD, NER and SWAG."""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from conftest import UNCASED_VOCAB, tiny_config

from bert_tf.classification.objective import Classification
from bert_tf.finetuning.driver import run_task
from bert_tf.finetuning.options import FineTuningOptions
from bert_tf.finetuning.task import Task
from bert_tf.io.tfrecord import RecordSchema
from bert_tf.options import option, options, positive
from bert_tf.text.packing import pack_tokens, pad_inputs
from bert_tf.training.options import EvalOptions

WORDS = ["the", "man", "saw", "a", "house", "near", "river", "today", "with", "his", "car"]
PETS = ["cat", "dog"]


@options
class PetsOptions(FineTuningOptions, EvalOptions):
    num_examples: int = option(96, "Sentences per split.", positive)


class Pets(Task):
    """1 when the sentence names a pet, wherever the word is."""

    name = "pets"
    output_names = ("logits", "label_ids")

    def read(self, split):
        rng = np.random.default_rng({"train": 0, "dev": 1, "test": 2}[split])
        sentences = []
        for i in range(self.options.num_examples):
            words = list(rng.choice(WORDS, 8))
            if i % 2:
                words[rng.integers(8)] = PETS[i % 4 // 2]
            sentences.append((" ".join(words), i % 2))
        return sentences

    def objective(self, config):
        return Classification(2)

    def features(self, examples, split, tokenizer):
        features = []
        for text, label in examples:
            tokens, segment_ids = pack_tokens(tokenizer.tokenize(text), None, 16)
            ids = tokenizer.convert_tokens_to_ids(tokens)
            features.append((*pad_inputs(ids, segment_ids, 16), label))
        return features

    def record_schema(self, is_training):
        seq = ((16,), "int64")
        return RecordSchema(
            {"input_ids": seq, "input_mask": seq, "segment_ids": seq}
            | {"label_ids": ((), "int64"), "is_real_example": ((), "int64")}
        )

    def record_values(self, feature, is_training):
        input_ids, input_mask, segment_ids, label = feature
        return {
            "input_ids": input_ids,
            "input_mask": input_mask,
            "segment_ids": segment_ids,
            "label_ids": label,
            "is_real_example": 1,
        }

    def evaluate(self, split, examples, features, predictions):
        correct = predictions.real("logits").argmax(-1) == predictions.real("label_ids")
        return {"eval_accuracy": float(correct.mean())} if split == "dev" else {}


def test_a_task_of_hooks_alone_trains_evaluates_and_writes_its_results(tmp_path):
    config_file = tmp_path / "bert_config.json"
    tiny_config().to_json_file(config_file)
    task = Pets(
        PetsOptions(
            bert_config_file=str(config_file),
            vocab_file=str(UNCASED_VOCAB),
            output_dir=str(tmp_path / "out"),
            max_seq_length=16,
            do_train=True,
            do_eval=True,
            do_predict=True,
            train_batch_size=16,
            eval_batch_size=16,
            predict_batch_size=16,
            learning_rate=3e-3,
            num_train_epochs=12.0,
            seed=1,
        )
    )
    results = run_task(task)

    assert results["eval_accuracy"] > 0.9  # half the sentences name a pet
    assert results["global_step"] == 72  # int(96 / 16 * 12), the original's schedule
    lines = (tmp_path / "out" / "eval_results.txt").read_text().splitlines()
    assert lines == [f"eval_accuracy = {results['eval_accuracy']}", "global_step = 72"]
    for name in ("train.tf_record", "eval.tf_record", "predict.tf_record", "ckpt-72.index"):
        assert (tmp_path / "out" / name).is_file(), name
    assert list((tmp_path / "out" / "eval").glob("events.out.tfevents.*"))


def test_every_summary_writer_a_run_opens_is_closed(tmp_path, monkeypatch):

    opened, closed = [], []
    create = tf.summary.create_file_writer

    def tracked(logdir, *args, **kwargs):
        writer = create(logdir, *args, **kwargs)
        opened.append(logdir)
        close = writer.close
        writer.close = lambda: closed.append(logdir) or close()
        return writer

    monkeypatch.setattr(tf.summary, "create_file_writer", tracked)
    config_file = tmp_path / "bert_config.json"
    tiny_config().to_json_file(config_file)
    options = PetsOptions(
        bert_config_file=str(config_file), vocab_file=str(UNCASED_VOCAB),
        output_dir=str(tmp_path / "out"), max_seq_length=16, do_train=True, do_eval=True,
        train_batch_size=16, eval_batch_size=16, num_train_epochs=1.0, seed=1,
    )  # fmt: skip
    run_task(Pets(options))
    assert sorted(opened) == sorted(closed) and len(opened) == 2  # train/, eval/
