"""SQuAD reading, featurization and post-processing, as the original's run_squad.py: words at
whitespace, answers as word spans (unrecoverable ones skipped), sliding windows with the
max-context rule, the [CLS] label for answers outside a window, get_final_text, and the null
answer of SQuAD 2.0. tests/fixtures/squad holds the original's own outputs on sample files."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from conftest import SAMPLE_DATA

from bert_tf.errors import InputError
from bert_tf.squad.data import read_squad_examples, read_squad_file, split_context
from bert_tf.squad.features import (
    FIRST_UNIQUE_ID,
    DocSpan,
    convert_examples_to_features,
    doc_spans,
    is_max_context,
)
from bert_tf.squad.options import SquadOptions
from bert_tf.squad.postprocess import RawResult, compute_predictions, get_final_text
from bert_tf.squad.task import SquadTask
from bert_tf.tokenization import FullTokenizer

TOKENIZER = FullTokenizer(str(SAMPLE_DATA / "vocab.txt"), do_lower_case=True)
CONTEXT = "The leader was John Smith (1895-1943). He lived in Montréal, Canada."


def squad(qas: list[dict], context: str = CONTEXT, version: str = "1.1") -> dict:
    return {
        "version": version,
        "data": [{"title": "t", "paragraphs": [{"context": context, "qas": qas}]}],
    }


def qa(qid: str, answer: str | None, context: str = CONTEXT, **extra) -> dict:
    answers = [] if answer is None else [{"text": answer, "answer_start": context.index(answer)}]
    return {"id": qid, "question": "Who?", "answers": answers, **extra}


def test_context_words_split_at_whitespace_and_narrow_no_break_space():
    words, offsets = split_context(" a  b\u202fc\n\td")
    assert words == ["a", "b", "c", "d"]
    assert offsets == [-1, 0, 0, 0, 1, 1, 2, 2, 2, 3]


def test_training_answer_becomes_a_word_span():
    [example] = read_squad_examples(squad([qa("1", "John Smith")]), "f", is_training=True)
    assert example.doc_tokens[example.start_position : example.end_position + 1] == [
        "John",
        "Smith",
    ]
    assert example.orig_answer_text == "John Smith"


def test_answer_that_is_not_in_its_words_is_skipped_and_counted(caplog):
    bad = {"id": "2", "question": "?", "answers": [{"text": "zzz", "answer_start": 4}]}
    with caplog.at_level(logging.WARNING):
        examples = read_squad_examples(squad([qa("1", "Canada"), bad]), "f", is_training=True)
    assert [e.qas_id for e in examples] == ["1"]
    assert "skipped 1 of 2 training questions" in caplog.text


def test_prediction_keeps_every_gold_answer_for_the_evaluation():
    two = qa("1", "John Smith")
    two["answers"].append({"text": "Smith", "answer_start": CONTEXT.index("Smith")})
    [example] = read_squad_examples(squad([two]), "f", is_training=False)
    assert example.answers == ["John Smith", "Smith"]
    assert example.start_position is None


@pytest.mark.parametrize(
    "dataset, flag, expected",
    [
        ({"data": [{"title": "x"}]}, False, "data[0] has no 'paragraphs'"),
        ({"version": "1.1"}, False, "the file has no 'data'"),
        (squad([{"question": "?"}]), False, "data[0].paragraphs[0].qas[0] has no 'id'"),
        (squad([qa("1", "Canada", is_impossible=True)]), False, "--version_2_with_negative"),
        (squad([qa("1", "Canada")], version="v2.0"), False, "SQuAD 2.0 data"),
        (squad([qa("1", "Canada")]), True, "no 'is_impossible'"),
    ],
)
def test_files_that_are_not_what_the_flags_say_are_one_clear_error(dataset, flag, expected):
    with pytest.raises(InputError, match=None) as error:
        read_squad_examples(dataset, "train.json", is_training=True, version_2_with_negative=flag)
    assert expected in str(error.value) and "train.json" in str(error.value)


def test_two_questions_to_predict_with_one_id_are_an_error():
    dataset = squad([qa("7", "John Smith"), qa("8", "Canada"), qa("7", "Canada")])
    with pytest.raises(InputError) as error:
        read_squad_examples(dataset, "dev.json", is_training=False)
    assert str(error.value) == (
        "dev.json: data[0].paragraphs[0].qas[2] has the id '7' of data[0].paragraphs[0].qas[0]; "
        "each question needs an id of its own (predictions.json is keyed by it)"
    )
    assert len(read_squad_examples(dataset, "train.json", is_training=True)) == 3  # no output


def test_training_question_with_several_answers_is_an_error():
    two = qa("7", "John Smith")
    two["answers"].append({"text": "Smith", "answer_start": CONTEXT.index("Smith")})
    with pytest.raises(InputError, match="id 7.* has 2 answers; for training each question"):
        read_squad_examples(squad([two]), "f", is_training=True)


def test_malformed_json_names_the_file(tmp_path):
    path = tmp_path / "dev.json"
    path.write_text('{"data": [')
    with pytest.raises(InputError, match=r"dev.json: not valid JSON"):
        read_squad_file(str(path))


def test_windows_slide_by_doc_stride_and_the_last_reaches_the_end():
    assert doc_spans(10, 4, 3) == [DocSpan(0, 4), DocSpan(3, 4), DocSpan(6, 4)]
    assert doc_spans(10, 4, 8) == [DocSpan(0, 4), DocSpan(4, 4), DocSpan(8, 2)]  # stride <= room
    assert doc_spans(3, 4, 3) == [DocSpan(0, 3)]


def test_max_context_is_the_window_where_the_piece_is_most_central():
    # The original's example: "bought" (position 7) has 4 left / 0 right context in span B
    # and 1 left / 3 right in span C, so C is its max-context span.
    spans = [DocSpan(0, 5), DocSpan(3, 5), DocSpan(6, 5)]
    assert [is_max_context(spans, i, 7) for i in range(3)] == [False, False, True]


def test_long_context_answer_is_labelled_in_the_windows_that_hold_it():
    context = " ".join(f"word{i}" for i in range(60)) + " The answer is Canada."
    [example] = read_squad_examples(squad([qa("1", "Canada", context)], context), "f", True)
    features = list(convert_examples_to_features([example], TOKENIZER, 32, 8, 6, True))
    assert len(features) > 3
    assert [f.unique_id for f in features] == list(
        range(FIRST_UNIQUE_ID, FIRST_UNIQUE_ID + len(features))
    )
    labelled = [f for f in features if f.start_position > 0]
    assert labelled and all(f.tokens[f.start_position] == "canada" for f in labelled)
    assert all((f.start_position, f.end_position) == (0, 0) for f in features if f not in labelled)
    for f in features:
        assert f.tokens[0] == "[CLS]" and f.tokens[-1] == "[SEP]" and len(f.input_ids) == 32
        assert f.segment_ids[: f.tokens.index("[SEP]") + 1] == [0] * (f.tokens.index("[SEP]") + 1)


def test_answer_span_tightens_to_the_pieces_that_spell_it():
    [example] = read_squad_examples(squad([qa("1", "1895")]), "f", True)
    assert example.doc_tokens[example.start_position] == "(1895-1943)."
    [feature] = convert_examples_to_features([example], TOKENIZER, 64, 32, 16, True)
    assert feature.tokens[feature.start_position : feature.end_position + 1] == ["1895"]


def test_impossible_question_is_labelled_at_cls():
    examples = read_squad_examples(
        squad([qa("1", None, is_impossible=True)], version="v2.0"), "f", True, True
    )
    [feature] = convert_examples_to_features(examples, TOKENIZER, 64, 32, 16, True)
    assert (feature.start_position, feature.end_position, feature.is_impossible) == (0, 0, True)


@pytest.mark.parametrize(
    "pred, orig, expected",
    [
        ("steve smith", "Steve Smith's", "Steve Smith"),
        ("montreal", "Montréal,", "Montréal"),
        ("1895", "(1895-1943).", "1895"),
        ("not there", "Some words", "Some words"),  # not found: the words themselves
    ],
)
def test_final_text_projects_the_prediction_onto_the_original_text(pred, orig, expected):
    assert get_final_text(pred, orig, do_lower_case=True) == expected


def _predict(examples, logits: dict, version_2: bool, threshold: float = 0.0):
    features = list(convert_examples_to_features(examples, TOKENIZER, 64, 32, 16, False))
    results = []
    for f in features:
        start, end = np.full(64, -10.0, np.float32), np.full(64, -10.0, np.float32)
        for token, (s, e) in logits.items():
            if token in f.tokens:
                start[f.tokens.index(token)], end[f.tokens.index(token)] = s, e
        results.append(RawResult(f.unique_id, start, end))
    return compute_predictions(examples, features, results, 5, 10, True, version_2, threshold)


def test_best_span_is_the_highest_start_plus_end_and_nbest_has_probabilities():
    examples = read_squad_examples(squad([qa("1", "Canada")]), "f", False)
    predictions, nbest, null_odds = _predict(
        examples, {"montreal": (5.0, 1.0), "canada": (2.0, 6.0)}, version_2=False
    )
    assert predictions == {"1": "Montréal, Canada"}  # 5 + 6 beats 5 + 1 and 2 + 6
    assert [e["text"] for e in nbest["1"][:3]] == ["Montréal, Canada", "Canada", "Montréal"]
    assert sum(e["probability"] for e in nbest["1"]) == pytest.approx(1.0)
    assert null_odds == {}


@pytest.mark.parametrize("threshold, expected", [(0.0, ""), (2.5, "Canada")])
def test_null_answer_wins_when_its_score_exceeds_the_best_span_by_the_threshold(
    threshold, expected
):
    examples = read_squad_examples(
        squad([qa("1", "Canada")], version="v2.0"), "f", False, version_2_with_negative=True
    )
    logits = {"[CLS]": (5.0, 5.0), "canada": (4.0, 4.0)}
    predictions, nbest, null_odds = _predict(examples, logits, True, threshold)
    assert null_odds == {"1": pytest.approx(2.0)}  # (5 + 5) - (4 + 4)
    assert predictions == {"1": expected}
    assert "" in [e["text"] for e in nbest["1"]]


def test_files_are_json_as_the_original_writes_them(tmp_path):
    from bert_tf.squad.postprocess import write_predictions

    paths = write_predictions(str(tmp_path), {"a": "x"}, {"a": []}, {"a": 1.5})
    assert [p.rsplit("/", 1)[1] for p in paths] == [
        "predictions.json",
        "nbest_predictions.json",
        "null_odds.json",
    ]
    assert open(paths[0]).read() == json.dumps({"a": "x"}, indent=4) + "\n"


def test_tfds_squad_reads_as_a_squad_file():
    tfds = pytest.importorskip("tensorflow_datasets")
    import tensorflow as tf

    from bert_tf.squad.data import tfds_squad

    def row(qid, context, answer):
        start = context.index(answer)
        return {"id": qid, "title": "t", "context": context, "question": "Which?",
                "answers": {"text": [answer], "answer_start": [start]}}  # fmt: skip

    rows = [
        row("a", CONTEXT, "Canada"),
        row("b", CONTEXT, "1895"),
        row("c", "Other text.", "Other"),
    ]

    def as_dataset(self, *args, **kwargs):
        return tf.data.Dataset.from_generator(
            lambda: iter(rows),
            output_signature={
                "id": tf.TensorSpec([], tf.string),
                "title": tf.TensorSpec([], tf.string),
                "context": tf.TensorSpec([], tf.string),
                "question": tf.TensorSpec([], tf.string),
                "answers": {
                    "text": tf.TensorSpec([None], tf.string),
                    "answer_start": tf.TensorSpec([None], tf.int32),
                },
            },
        )

    with tfds.testing.mock_data(as_dataset_fn=as_dataset):
        dataset = tfds_squad("squad/v1.1", "train", None)
    assert [len(article["paragraphs"]) for article in dataset["data"]] == [2]  # a, b share one
    examples = read_squad_examples(dataset, "squad/v1.1", is_training=True)
    assert [e.orig_answer_text for e in examples] == ["Canada", "1895", "Other"]


def test_tfds_squad_that_is_not_prepared_is_one_clear_error(tmp_path):
    pytest.importorskip("tensorflow_datasets")
    from bert_tf.squad.data import tfds_squad

    with pytest.raises(InputError, match=r"squad/v2.0 \(split train\) is not prepared"):
        tfds_squad("squad/v2.0", "train", str(tmp_path))


def test_the_count_of_skipped_questions_is_repeated_at_the_end_of_the_run(tmp_path):
    bad = {"id": "2", "question": "?", "answers": [{"text": "zzz", "answer_start": 4}]}
    train_file = tmp_path / "train.json"
    train_file.write_text(json.dumps(squad([qa("1", "Canada"), bad])), encoding="utf-8")
    task = SquadTask(SquadOptions(train_file=str(train_file), do_train=True))
    assert len(task.read("train")) == 1
    # finetuning.run_task logs each note again after the evaluation, its last lines.
    assert task.read_notes == [
        f"{train_file}: 1 of 2 training questions skipped: their answer text is not at "
        "answer_start in the context's words (as the original)"
    ]


def test_a_stride_longer_than_the_window_says_the_windows_will_not_overlap(caplog):
    from bert_tf.squad.options import SquadOptions

    options = SquadOptions(
        bert_config_file="c", vocab_file="v", output_dir="o", do_train=True, train_file="t",
        max_seq_length=128,  # the original's default doc_stride 128 with a 61-piece window
    )  # fmt: skip
    with caplog.at_level(logging.WARNING):
        options.check()
    assert [r.getMessage() for r in caplog.records] == [
        "--doc_stride=128 is longer than a window's 61 pieces (--max_seq_length=128 - "
        "--max_query_length=64 - 3): windows will not overlap, each starting where the one "
        "before ends; a stride of at most half a window gives every word context on both sides"
    ]


def test_the_default_stride_and_window_say_nothing(caplog):
    from bert_tf.squad.options import SquadOptions

    options = SquadOptions(
        bert_config_file="c", vocab_file="v", output_dir="o", do_train=True, train_file="t",
    )  # fmt: skip
    assert (options.max_seq_length, options.doc_stride) == (384, 128)  # a 317-piece window
    with caplog.at_level(logging.WARNING):
        options.check()
    assert caplog.records == []
