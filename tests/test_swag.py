"""SWAG (paper Sec. 4.4): the CSV files read by column name with one clear error per bad row,
each example packed as 4 sequences `[CLS] sent1 [SEP] sent2 ending_i [SEP]`, the model's
score of a choice the dot product of one vector with that choice's pooled [CLS] vector, and
its checkpoint names those of the original classifier."""

from __future__ import annotations

import csv
import re

import numpy as np
import pytest
import tensorflow as tf
from conftest import UNCASED_VOCAB, tiny_config_dict

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.finetuning.input_pipeline import record_dataset
from bert_tf.io.tfrecord import write_records
from bert_tf.model_io.checkpoints import save_original_checkpoint
from bert_tf.model_io.loading import load_checkpoint
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.multiple_choice import BertMultipleChoice
from bert_tf.swag.data import SwagExample, get_examples, read_swag_examples
from bert_tf.swag.features import (
    convert_examples_to_features,
    convert_single_example,
    record_schema,
    record_values,
)
from bert_tf.swag.objective import MultipleChoice
from bert_tf.tokenization import FullTokenizer

# SWAG's released train.csv header: an unnamed index column first.
SWAG_HEADER = [
    "", "video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source",
    "ending0", "ending1", "ending2", "ending3", "label",
]  # fmt: skip
SWAG_ROW = [
    "0", "anetv_jkn6uvmqwh4", "3416", "Members of the procession walk down the street "
    'holding small horn brass instruments. A drum line', "Members of the procession walk "
    "down the street holding small horn brass instruments.", "A drum line", "gold",
    "passes by walking down the street playing their instruments.",
    'has heard approaching them, "quietly".', "arrives and they're outside dancing and asleep.",
    "turns the lead singer watches the performance.", "0",
]  # fmt: skip


def write_csv(path, rows) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    return str(path)


@pytest.fixture(scope="module")
def tokenizer() -> FullTokenizer:
    return FullTokenizer(str(UNCASED_VOCAB), do_lower_case=True)


def example(context: str, start: str, endings: list[str], label: int | None = 0) -> SwagExample:
    return SwagExample("id", context, start, endings, label)


# Reading. ------------------------------------------------------------------------------


def test_reads_swags_released_format(tmp_path):
    path = write_csv(tmp_path / "train.csv", [SWAG_HEADER, SWAG_ROW])
    [read] = read_swag_examples(path)
    assert read.swag_id == "3416"
    assert read.context_sentence == SWAG_ROW[4]
    assert read.start_ending == "A drum line"
    assert read.endings[1] == 'has heard approaching them, "quietly".'  # CSV quoting undone
    assert read.label == 0
    assert (
        read.choices[0]
        == "A drum line passes by walking down the street playing their instruments."
    )


def test_columns_are_found_by_name_and_the_rest_is_optional(tmp_path):
    header = ["label", "ending3", "ending2", "ending1", "ending0", "sent2", "sent1", "startphrase"]
    rows = [header, ["2", "d", "c", "b", "a", "Then", "A man sits.", "A man sits. Then"]]
    [read] = read_swag_examples(write_csv(tmp_path / "val.csv", rows))
    assert (read.context_sentence, read.start_ending) == ("A man sits.", "Then")
    assert read.endings == ["a", "b", "c", "d"]
    assert read.label == 2
    assert read.swag_id == "0"  # no fold-ind column: the data row's index


def test_test_file_has_no_label_and_splits_name_swags_files(tmp_path):
    header = [name for name in SWAG_HEADER if name != "label"]
    write_csv(tmp_path / "test.csv", [header, SWAG_ROW[:-1]])
    write_csv(tmp_path / "val.csv", [SWAG_HEADER, SWAG_ROW])
    assert get_examples(str(tmp_path), "test")[0].label is None
    assert get_examples(str(tmp_path), "dev")[0].label == 0
    with pytest.raises(InputError, match=r"train\.csv: no such file \(check --data_dir\)"):
        get_examples(str(tmp_path), "train")


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([SWAG_HEADER[:-1], SWAG_ROW[:-1]], "train.csv: no column label in the header"),
        (
            [SWAG_HEADER[:8] + SWAG_HEADER[9:], SWAG_ROW[:8] + SWAG_ROW[9:]],
            "train.csv: no column ending1 in the header; expected SWAG's columns sent1, sent2",
        ),
        ([SWAG_HEADER, SWAG_ROW, SWAG_ROW[:-1] + ["4"]], "train.csv:3: label '4'; expected"),
        ([SWAG_HEADER, SWAG_ROW[:-1] + ["B"]], "train.csv:2: label 'B'; expected the index"),
        ([SWAG_HEADER, SWAG_ROW, SWAG_ROW[:9] + [" "] + SWAG_ROW[10:]], "train.csv:3: ending2 is"),
        ([SWAG_HEADER, SWAG_ROW[:5]], "train.csv:2: 5 comma-separated fields; expected 12"),
        ([SWAG_HEADER, SWAG_ROW + ["x"]], "train.csv:2: 13 comma-separated fields; expected 12"),
        ([SWAG_HEADER], "train.csv: the file has no examples"),
    ],
)
def test_bad_files_name_the_file_line_value_and_expectation(rows, message, tmp_path):
    with pytest.raises(InputError, match=re.escape(message)):
        read_swag_examples(write_csv(tmp_path / "train.csv", rows))


# Features. -----------------------------------------------------------------------------


def tokens_of(tokenizer, ids) -> list[str]:
    return tokenizer.convert_ids_to_tokens([i for i in ids if i])


def test_each_choice_is_cls_context_sep_start_and_ending_sep(tokenizer):
    features = convert_single_example(
        example("A man plays.", "He", ["sings.", "runs away.", "eats", "sleeps"], label=3),
        max_seq_length=12,
        tokenizer=tokenizer,
    )
    assert tokens_of(tokenizer, features.input_ids[1]) == [
        "[CLS]", "a", "man", "plays", ".", "[SEP]", "he", "runs", "away", ".", "[SEP]",
    ]  # fmt: skip
    assert features.segment_ids[1] == [0] * 6 + [1] * 5 + [0]
    assert features.input_mask[1] == [1] * 11 + [0]
    assert features.input_mask[2] == [1] * 9 + [0] * 3  # "he eats" without a period
    assert np.shape(features.input_ids) == (4, 12)
    assert features.label_id == 3 and features.is_real_example


def test_truncation_pops_from_the_end_of_the_longer_of_context_and_choice(tokenizer):
    context = "one two three four five six seven"
    features = convert_single_example(
        example(context, "then", ["a b", "a b c d e f g h", "x", "y"]), 10, tokenizer
    )
    # 10 - 3 = 7 tokens for the pair: the longer side loses its last tokens first.
    assert tokens_of(tokenizer, features.input_ids[0]) == [
        "[CLS]", "one", "two", "three", "four", "[SEP]", "then", "a", "b", "[SEP]",
    ]  # fmt: skip
    assert tokens_of(tokenizer, features.input_ids[1]) == [
        "[CLS]", "one", "two", "three", "four", "[SEP]", "then", "a", "b", "[SEP]",
    ]  # fmt: skip
    assert tokens_of(tokenizer, features.input_ids[2])[1:5] == ["one", "two", "three", "four"]


def test_records_read_back_as_4_sequences_per_example_padded_to_whole_batches(tokenizer, tmp_path):
    examples = [
        example("A man plays.", "He", ["sings.", "runs.", "eats.", "sleeps."], label=i)
        for i in range(3)
    ]
    path = str(tmp_path / "eval.tf_record")
    schema = record_schema(16)
    features = convert_examples_to_features(examples, 16, tokenizer)
    records = (schema.encode(record_values(f)) for f in features)
    assert write_records(path, records, schema.padding(), pad_to_multiple_of=2) == 3
    batches = list(record_dataset(path, schema.spec(), batch_size=2, is_training=False))
    assert len(batches) == 2  # 3 examples + 1 padding
    first = batches[0]
    assert first["input_ids"].shape == (2, 4, 16) and first["input_ids"].dtype == tf.int32
    expected = convert_single_example(examples[0], 16, tokenizer)
    np.testing.assert_array_equal(first["input_ids"][0], expected.input_ids)
    np.testing.assert_array_equal(first["segment_ids"][0], expected.segment_ids)
    labels = np.concatenate([b["label_ids"] for b in batches])
    real = np.concatenate([b["is_real_example"] for b in batches])
    assert labels.tolist() == [0, 1, 2, 0] and real.tolist() == [1, 1, 1, 0]
    assert not np.any(batches[1]["input_mask"][1])  # the padding example is all zeros
    assert np.concatenate([b["example_index"] for b in batches]).tolist() == [0, 1, 2, 3]


# The model. ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def model() -> BertMultipleChoice:
    return BertMultipleChoice(BertConfig(**tiny_config_dict()), num_choices=4)


def model_inputs(batch: int = 3, choices: int = 4, seq_length: int = 10) -> dict:
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 99, (batch, choices, seq_length)).astype("int32")
    mask = np.ones_like(ids)
    mask[:, :, 7:] = 0
    segments = np.zeros_like(ids)
    segments[:, :, 4:7] = 1
    return {"input_ids": ids * mask, "input_mask": mask, "segment_ids": segments}


def test_scores_every_choice_of_every_example(model):
    outputs = model(model_inputs(), training=False)
    assert outputs["logits"].shape == (3, 4) and outputs["logits"].dtype == "float32"
    assert outputs["pooled_output"].shape == (3, 4, 32)


def test_logits_are_one_vector_dotted_with_each_choices_pooled_cls(model):
    inputs = model_inputs()
    flat = {name: value.reshape(12, 10) for name, value in inputs.items()}  # [B * C, S]
    pooled = model.encoder(flat, training=False)["pooled_output"].numpy()  # [B * C, H]
    head = model.head
    assert head.output_weights.shape == (1, 32) and head.output_bias.shape == (1,)
    expected = pooled @ head.output_weights.numpy()[0] + head.output_bias.numpy()[0]  # [B * C]
    logits = model(inputs, training=False)["logits"].numpy()
    np.testing.assert_allclose(logits, expected.reshape(3, 4), rtol=0, atol=1e-6)


def test_loss_is_softmax_cross_entropy_over_the_choices_of_real_examples(model):
    objective = MultipleChoice()
    logits = np.array([[2.0, 0.0, 0.0, 0.0], [0.0, 1.0, 3.0, 0.0], [9.0, 0.0, 0.0, 0.0]])
    features = {"label_ids": np.array([0, 1, 3]), "is_real_example": np.array([1, 1, 0])}
    sums = objective.sums({"logits": logits.astype("float32")}, features)
    counts = objective.counts(features)
    log_probs = logits[:2] - np.log(np.exp(logits[:2]).sum(-1, keepdims=True))
    expected = -(log_probs[0, 0] + log_probs[1, 1]) / 2
    assert float(objective.loss(sums, counts)) == pytest.approx(expected, rel=1e-6)
    assert float(objective.metrics(sums, counts)["accuracy"]) == 0.5
    assert isinstance(objective.build_model(BertConfig(**tiny_config_dict())), BertMultipleChoice)


def test_config_round_trips(model):
    rebuilt = BertMultipleChoice.from_config(model.get_config())
    assert rebuilt.num_choices == 4 and rebuilt.config.to_dict() == model.config.to_dict()


# Checkpoints. --------------------------------------------------------------------------


def test_checkpoint_names_are_the_encoders_and_the_classifiers_output_weights(model, tmp_path):
    table = model.original_variable_names()
    assert {id(v) for v in table.values()} == {id(w) for w in model.weights}
    heads = sorted(name for name in table if not name.startswith("bert/"))
    assert heads == ["output_bias", "output_weights"]
    assert list(table["output_weights"].shape) == [1, 32]

    prefix = save_original_checkpoint(model, tmp_path / "bert_model.ckpt")
    reloaded = BertMultipleChoice(BertConfig(**tiny_config_dict()))
    report = load_checkpoint(reloaded, prefix)
    assert report.missing == report.unexpected == []
    for a, b in zip(model.weights, reloaded.weights, strict=True):
        assert a.numpy().tobytes() == b.numpy().tobytes(), a.path


def test_a_pre_trained_encoder_loads_under_a_new_choice_vector(model, tmp_path):
    encoder = BertEncoder(BertConfig(**tiny_config_dict()))
    prefix = save_original_checkpoint(encoder, tmp_path / "bert_model.ckpt")
    fresh = BertMultipleChoice(BertConfig(**tiny_config_dict()))
    report = load_checkpoint(fresh, prefix)
    assert sorted(report.missing) == ["output_bias", "output_weights"]
    np.testing.assert_array_equal(fresh.encoder.pooler.kernel.numpy(), encoder.pooler.kernel)
