"""GLUE data: each processor reads the columns of the GLUE release (the original's four as the
original does), the metrics are GLUE's, and features are packed as run_classifier packs them."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from conftest import STS_B_HEADER, UNCASED_VOCAB, tiny_pretraining_config, write_tsv

from bert_tf.classification import metrics
from bert_tf.classification.features import (
    convert_examples_to_features,
    convert_single_example,
    record_schema,
    record_values,
)
from bert_tf.classification.processors import PROCESSORS, InputExample, get_processor
from bert_tf.errors import InputError
from bert_tf.finetuning.input_pipeline import record_dataset
from bert_tf.io.tfrecord import write_records
from bert_tf.tokenization import FullTokenizer

MNLI_HEADER = [
    "index", "promptID", "pairID", "genre", "sentence1_binary_parse", "sentence2_binary_parse",
    "sentence1_parse", "sentence2_parse", "sentence1", "sentence2", "label1", "gold_label",
]  # fmt: skip


def mnli_row(index, a, b, label):
    return [str(index), "1", "2", "fiction", "(", "(", "(", "(", a, b, label, label]


# task -> (file, rows, expected (text_a, text_b, label) of the first example)
CASES = {
    "cola": (
        "train.tsv",
        [["gj04", "1", "", "Our friends won't buy this analysis."]],
        ("Our friends won't buy this analysis.", None, "1"),
    ),
    "sst-2": (
        "train.tsv",
        [["sentence", "label"], ["a charming journey ", "1"]],
        ("a charming journey ", None, "1"),
    ),  # noqa: E501
    "mrpc": (
        "train.tsv",
        [
            ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
            ["1", "7", "8", "He said.", '"She said'],
        ],  # noqa: E501
        ("He said.", '"She said', "1"),
    ),
    "sts-b": (
        "train.tsv",
        [
            STS_B_HEADER,
            [
                "0",
                "main",
                "MSRvid",
                "2012",
                "0001",
                "none",
                "none",
                "A plane.",
                "An air plane.",
                "5.000",
            ],  # noqa: E501
        ],
        ("A plane.", "An air plane.", 5.0),
    ),
    "qqp": (
        "train.tsv",
        [
            ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"],
            ["0", "1", "2", "Why?", "How?", "0"],
        ],  # noqa: E501
        ("Why?", "How?", "0"),
    ),
    "mnli": (
        "train.tsv",
        [MNLI_HEADER, mnli_row(0, "A man.", "A person.", "entailment")],
        ("A man.", "A person.", "entailment"),
    ),  # noqa: E501
    "qnli": (
        "train.tsv",
        [["index", "question", "sentence", "label"], ["0", "Who?", "Him.", "not_entailment"]],
        ("Who?", "Him.", "not_entailment"),
    ),
    "rte": (
        "train.tsv",
        [
            ["index", "sentence1", "sentence2", "label"],
            ["0", "No weapons.", "Weapons.", "entailment"],
        ],  # noqa: E501
        ("No weapons.", "Weapons.", "entailment"),
    ),
    "wnli": (
        "train.tsv",
        [["index", "sentence1", "sentence2", "label"], ["0", "I stuck a pin.", "The pin.", "1"]],
        ("I stuck a pin.", "The pin.", "1"),
    ),
    "ax": (  # no training set: its test file, which the MNLI model predicts
        "diagnostic.tsv",
        [["index", "sentence1", "sentence2"], ["0", "The cat sat.", "The cat did not sit."]],
        ("The cat sat.", "The cat did not sit.", "contradiction"),
    ),
    "xnli": (
        "multinli/multinli.train.zh.tsv",
        [["premise", "hypo", "label"], ["他说", "她说", "contradictory"]],
        ("他说", "她说", "contradiction"),
    ),
}


def test_every_task_has_a_case():
    assert set(CASES) == set(PROCESSORS)


@pytest.mark.parametrize("task", sorted(CASES))
def test_each_processor_reads_its_train_columns(task, tmp_path):
    file_name, rows, expected = CASES[task]
    write_tsv(tmp_path / file_name, rows)
    processor = get_processor(task)
    split = "train" if "train" in processor.splits() else "test"  # AX: a test set alone
    (example,) = processor.get_examples(str(tmp_path), split)
    assert (example.text_a, example.text_b, example.label) == expected


def test_task_names_are_case_insensitive_and_unknown_ones_list_the_valid():
    assert get_processor("MRPC").name == "MRPC"
    assert get_processor("SST-2").name == get_processor("sst2").name == "SST-2"
    with pytest.raises(
        InputError, match=r"--task_name='mrcp' is not a task; expected one of .*'mrpc'"
    ):  # noqa: E501
        get_processor("mrcp")


def test_test_files_give_the_glue_index_and_a_placeholder_label(tmp_path):
    write_tsv(
        tmp_path / "test.tsv",
        [["index", "#1 ID", "#2 ID", "#1 String", "#2 String"], ["17", "1", "2", "A.", "B."]],
    )  # noqa: E501
    (example,) = get_processor("mrpc").get_test_examples(str(tmp_path))
    assert (example.index, example.label, example.text_a, example.text_b) == ("17", "0", "A.", "B.")


def test_mnli_reads_matched_and_mismatched_dev_sets(tmp_path):
    write_tsv(tmp_path / "dev_matched.tsv", [MNLI_HEADER, mnli_row(0, "m", "m2", "neutral")])
    write_tsv(
        tmp_path / "dev_mismatched.tsv", [MNLI_HEADER, mnli_row(0, "mm", "mm2", "contradiction")]
    )  # noqa: E501
    processor = get_processor("mnli")
    assert processor.get_dev_examples(str(tmp_path))[0].text_a == "m"
    assert processor.get_examples(str(tmp_path), "dev_mismatched")[0].text_a == "mm"


def test_xnli_dev_keeps_only_chinese_rows(tmp_path):
    header = ["language", "gold_label", "2", "3", "4", "5", "sentence1", "sentence2"]
    rows = [
        header,
        ["en", "neutral", "", "", "", "", "e1", "e2"],
        ["zh", "entailment", "", "", "", "", "z1", "z2"],
    ]  # noqa: E501
    write_tsv(tmp_path / "xnli.dev.tsv", rows)
    (example,) = get_processor("xnli").get_dev_examples(str(tmp_path))
    assert (example.text_a, example.label) == ("z1", "entailment")


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [["index", "sentence1", "sentence2", "label"], ["0", "a", "b"]],
            r"train.tsv:2: 3 tab-separated columns; expected 4",
        ),  # noqa: E501
        (
            [["index", "sentence1", "sentence2", "label"], ["0", "a", "b", "maybe"]],
            r"train.tsv:2: unknown label 'maybe'; expected one of "
            r"\['entailment', 'not_entailment'\]",
        ),
        ([["index", "sentence1", "sentence2", "label"]], r"train.tsv: the file has no examples"),
        ([], r"train.tsv: the file has no examples"),
    ],
)
def test_bad_rows_name_the_file_and_line(rows, message, tmp_path):
    write_tsv(tmp_path / "train.tsv", rows)
    with pytest.raises(InputError, match=message):
        get_processor("rte").get_train_examples(str(tmp_path))


def test_a_file_of_another_tasks_columns_names_the_task(tmp_path):
    write_tsv(tmp_path / "train.tsv", [["sentence", "label"], ["a fine film", "1"]])  # SST-2's
    with pytest.raises(InputError) as error:
        get_processor("mrpc").get_train_examples(str(tmp_path))
    assert str(error.value).endswith(
        "train.tsv:2: 2 tab-separated column(s); MRPC's train.tsv has at least 5 (is "
        "--task_name=MRPC the right task?)"
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"index\tsentence1\tsentence2\tlabel\n0\tCaf\xe9\tb\tentailment\n",
         "train.tsv:2: byte 0xe9 (column 6) is not UTF-8; expected a tab-separated GLUE file, "
         "UTF-8 text"),
        (b"PK\x03\x04\x14\x00\x00\x00", "train.tsv:1: a NUL byte, as in a binary file; "
                                         "expected a tab-separated GLUE file"),
    ],
)  # fmt: skip
def test_a_file_that_is_not_utf8_text_names_the_file_and_line(data, message, tmp_path):
    (tmp_path / "train.tsv").write_bytes(data)
    with pytest.raises(InputError) as error:
        get_processor("rte").get_train_examples(str(tmp_path))
    assert str(error.value) == f"{tmp_path / message}"


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match=r"dev.tsv: no such file"):
        get_processor("rte").get_dev_examples(str(tmp_path))


def test_a_regression_label_must_be_a_number(tmp_path):
    _, rows, _ = CASES["sts-b"]
    write_tsv(tmp_path / "train.tsv", [rows[0], rows[1][:-1] + ["five"]])
    with pytest.raises(InputError, match=r"train.tsv:2: label 'five' is not a number"):
        get_processor("sts-b").get_train_examples(str(tmp_path))


# --- metrics: values computed by hand (sklearn/scipy define them the same way) -------------


def test_glue_metrics():
    predictions = [1, 1, 0, 0, 1, 0]
    labels = [1, 0, 0, 1, 1, 0]
    assert metrics.accuracy(predictions, labels) == pytest.approx(4 / 6)
    assert metrics.f1(predictions, labels) == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))
    # tp=2 tn=2 fp=1 fn=1: (4 - 1) / sqrt(3 * 3 * 3 * 3)
    assert metrics.matthews_corrcoef(predictions, labels) == pytest.approx(3 / 9)
    assert metrics.matthews_corrcoef([1, 1], [1, 0]) == 0.0  # a zero factor: 0, as sklearn
    x, y = [1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 5.0, 9.0]
    assert metrics.pearson(x, y) == pytest.approx(np.corrcoef(x, y)[0, 1])
    # Ties share their mean rank: ranks of [1, 2, 2, 3] are [1, 2.5, 2.5, 4].
    assert metrics.spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(
        np.corrcoef([1, 2.5, 2.5, 4], [1, 2, 3, 4])[0, 1]
    )
    assert metrics.spearman(x, [10, 20, 30, 1000]) == pytest.approx(1.0)


# --- features ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(str(UNCASED_VOCAB), do_lower_case=True)


def test_a_pair_is_packed_and_truncated_from_the_end_of_the_longer(tokenizer):
    example = InputExample("x", "the quick brown fox jumps", "over the dog", label="1")
    features = convert_single_example(example, ["0", "1"], 10, tokenizer)
    tokens = tokenizer.convert_ids_to_tokens(features.input_ids)
    # 7 slots for text: "the quick brown fox" (popped "jumps") and "over the dog".
    assert tokens == [
        "[CLS]",
        "the",
        "quick",
        "brown",
        "fox",
        "[SEP]",
        "over",
        "the",
        "dog",
        "[SEP]",
    ]  # noqa: E501
    assert features.segment_ids == [0] * 6 + [1] * 4
    assert features.input_mask == [1] * 10
    assert features.label_id == 1


def test_eval_records_are_padded_to_whole_batches_with_not_real_examples(tokenizer, tmp_path):
    examples = [InputExample(str(i), "hello world", label="0") for i in range(5)]
    features = convert_examples_to_features(examples, ["0", "1"], 8, tokenizer)
    path = str(tmp_path / "eval.tf_record")
    schema = record_schema(8)
    records = (schema.encode(record_values(f)) for f in features)
    count = write_records(path, records, schema.padding(), pad_to_multiple_of=4)
    assert count == 5
    (batch, second) = list(record_dataset(path, schema.spec(), 4, is_training=False))
    assert batch["input_ids"].dtype == tf.int32 and batch["input_ids"].shape == (4, 8)
    assert second["is_real_example"].numpy().tolist() == [1, 0, 0, 0]
    assert second["example_index"].numpy().tolist() == [4, 5, 6, 7]


def test_tf_records_have_the_originals_features(tokenizer, tmp_path):
    features = convert_examples_to_features(
        [InputExample("0", "hi", label="1")], ["0", "1"], 6, tokenizer
    )  # noqa: E501
    path = str(tmp_path / "train.tf_record")
    write_records(path, (record_schema(6).encode(record_values(f)) for f in features))
    record = next(iter(tf.data.TFRecordDataset(path))).numpy()
    parsed = tf.train.Example.FromString(record).features.feature
    assert sorted(parsed) == [
        "input_ids",
        "input_mask",
        "is_real_example",
        "label_ids",
        "segment_ids",
    ]  # noqa: E501
    assert parsed["label_ids"].int64_list.value == [1]


@pytest.mark.parametrize(
    ("task", "labels"), [("mnli", {"contradiction", "entailment", "neutral"}), ("mrpc", {"0", "1"})]
)  # noqa: E501
def test_tfds_glue_labels_become_the_tsv_label_names(task, labels):
    tfds = pytest.importorskip("tensorflow_datasets")
    from bert_tf.classification.tfds_glue import tfds_examples

    with tfds.testing.mock_data(num_examples=6, policy=tfds.testing.MockPolicy.USE_CODE):
        examples = tfds_examples(get_processor(task), "dev", None)
        test_examples = tfds_examples(get_processor(task), "test", None)
    assert len(examples) == 6
    assert {e.label for e in examples} <= labels
    assert all(isinstance(e.text_a, str) and isinstance(e.text_b, str) for e in examples)
    assert all(e.index is not None for e in test_examples)


def test_tfds_data_that_is_not_prepared_is_one_clear_error(tmp_path):
    pytest.importorskip("tensorflow_datasets")
    from bert_tf.classification.tfds_glue import tfds_examples

    with pytest.raises(InputError, match=r"glue/rte \(split validation\) is not prepared"):
        tfds_examples(get_processor("rte"), "dev", str(tmp_path))


def test_a_left_to_right_model_fine_tunes_left_to_right(tmp_path):
    from bert_tf.config import BertConfig
    from bert_tf.modeling.classifier import BertClassifier
    from bert_tf.pretraining.objectives import get_objective
    from bert_tf.pretraining.run import export_pretrained

    # run_pretraining --objective=ltr exports bert_config.json with causal_attention: true.
    export_pretrained(get_objective("ltr").build_model(tiny_pretraining_config()), str(tmp_path))
    written = tmp_path / "pretrained" / "bert_config.json"
    assert '"causal_attention": true' in written.read_text()
    causal = BertConfig.from_json_file(written)
    assert causal.causal_attention and causal.extra == {}
    assert BertClassifier(causal, 2).encoder.config.causal_attention
    assert not BertClassifier(tiny_pretraining_config(), 2).encoder.config.causal_attention
