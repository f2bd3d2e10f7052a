"""The question-answering SavedModel's graph (bert_tf.squad.serving) answers as the original:
given the original's fixture logits for every window, the in-graph featurization, span
choice and get_final_text give the answers of the original's predictions.json (and its
null_odds.json) on every question of tests/fixtures/squad, edge cases included."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tensorflow as tf
from conftest import FIXTURES, SAMPLE_DATA, recipe_logits, squad_features

from bert_tf.squad.serving import QuestionAnswerer

SQUAD = FIXTURES / "squad"


class RecordedLogits:
    """Stands in for the model: the fixture's logits of each window, in feature order (the
    order in which the graph makes the windows). Checks the graph's ids against ours."""

    def __init__(self, features) -> None:
        self.features = features

    def __call__(self, inputs, training=False):
        np.testing.assert_array_equal(
            inputs["input_ids"].numpy(), [f.input_ids for f in self.features]
        )
        np.testing.assert_array_equal(
            inputs["segment_ids"].numpy(), [f.segment_ids for f in self.features]
        )
        logits = [recipe_logits(f.unique_id) for f in self.features]
        return {
            "start_logits": tf.constant(np.stack([s for s, _ in logits])),
            "end_logits": tf.constant(np.stack([e for _, e in logits])),
        }


@pytest.mark.parametrize("name", ["v1", "v2", "v2_threshold"])
def test_graph_answers_equal_the_originals_predictions(name):
    record = json.loads((SQUAD / f"original_predictions_{name}.json").read_text())
    version_2 = record["version_2_with_negative"]
    examples, features = squad_features("v2_predict" if version_2 else "v1_predict")
    data = json.loads((SQUAD / ("v2_sample.json" if version_2 else "v1_sample.json")).read_text())
    pairs = [(qa["question"], p["context"]) for a in data["data"] for p in a["paragraphs"]
             for qa in p["qas"]]  # fmt: skip
    answerer = QuestionAnswerer(
        RecordedLogits(features),
        str(SAMPLE_DATA / "vocab.txt"),
        do_lower_case=True,
        max_seq_length=96,
        doc_stride=32,
        max_query_length=16,
        n_best_size=record["n_best_size"],
        max_answer_length=record["max_answer_length"],
        version_2_with_negative=version_2,
        null_score_diff_threshold=record["null_score_diff_threshold"],
    )
    out = answerer.answer(tf.constant([q for q, _ in pairs]), tf.constant([c for _, c in pairs]))
    answers = dict(zip([e.qas_id for e in examples], out["answer"].numpy(), strict=True))
    for qid, expected in record["predictions"].items():
        # "empty" where no span is valid (the original's placeholder) included.
        assert answers[qid].decode() == expected, qid
    if version_2:
        odds = dict(zip([e.qas_id for e in examples], out["null_odds"].numpy(), strict=True))
        for qid, expected in record["null_odds"].items():
            assert odds[qid] == pytest.approx(expected, abs=1e-4), qid


class FirstWordModel:
    """Stands in for a model that always answers the first word of the context: the start
    and end logits are highest at the first position of the second segment."""

    def __call__(self, inputs, training=False):
        segment = inputs["segment_ids"]  # [N, S]
        first = tf.cast((segment == 1) & (tf.cumsum(segment, axis=1) == 1), tf.float32)
        return {"start_logits": 10 * first, "end_logits": 10 * first}


@pytest.mark.parametrize("version_2", [False, True])
def test_an_empty_context_is_answered_empty_beside_the_others(version_2):
    answerer = QuestionAnswerer(
        FirstWordModel(), str(SAMPLE_DATA / "vocab.txt"), do_lower_case=True, max_seq_length=32,
        doc_stride=8, max_query_length=8, n_best_size=5, max_answer_length=10,
        version_2_with_negative=version_2, null_score_diff_threshold=0.0,
    )  # fmt: skip
    # As predictions.json: the original's "empty" (SQuAD 2.0: "", no answer).
    empty = b"" if version_2 else b"empty"
    for contexts, expected in [
        (["the cat sat", "", "A dog ran."], [b"the", empty, b"A"]),
        (["", "the cat sat"], [empty, b"the"]),
        (["the cat sat", ""], [b"the", empty]),
        (["", " "], [empty, empty]),
    ]:
        questions = tf.constant(["What sat?"] * len(contexts))
        out = answerer.answer(questions, tf.constant(contexts))
        assert list(out["answer"].numpy()) == expected, contexts


def test_questions_and_contexts_of_different_lengths_are_refused_naming_both():
    # Without the check, three questions on two contexts were answered twice, without a word.
    answerer = QuestionAnswerer(
        FirstWordModel(), str(SAMPLE_DATA / "vocab.txt"), do_lower_case=True, max_seq_length=32,
        doc_stride=8, max_query_length=8, n_best_size=5, max_answer_length=10,
        version_2_with_negative=False, null_score_diff_threshold=0.0,
    )  # fmt: skip
    with pytest.raises(tf.errors.InvalidArgumentError) as error:
        answerer.answer(tf.constant(["Who?", "What?", "Where?"]), tf.constant(["a b", "c d"]))
    assert (
        "serving_default: question has 3 strings and context 2; expected one context per "
        "question (one answer each)"
    ) in str(error.value)
    out = answerer.answer(tf.constant(["Who?", "What?"]), tf.constant(["a b", "c d"]))
    assert list(out["answer"].numpy()) == [b"a", b"c"]


def test_an_answerer_made_after_another_is_freed_spells_answers_from_its_own_vocab(tmp_path):
    # The id-to-token table had the tokenizer's fault (test_text_graph.py): named from the vocab
    # Asset's memory address, an answerer made where a freed one had lived spelt its answers'
    # tokens from the freed one's vocab.
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    other = tmp_path / "other.txt"
    other.write_text("".join(t + "\n" for t in specials + ["elsewhere"]))
    own = tmp_path / "own.txt"
    own.write_text("".join(t + "\n" for t in specials + ["hello"]))

    def answerer(vocab):
        return QuestionAnswerer(
            None, str(vocab), do_lower_case=True, max_seq_length=32, doc_stride=8,
            max_query_length=8, n_best_size=5, max_answer_length=10,
            version_2_with_negative=False, null_score_diff_threshold=0.0,
        )  # fmt: skip

    for _ in range(50):
        answerer(other)  # freed at once
        assert answerer(own).id_to_token.lookup(tf.constant(4, tf.int64)) == b"hello"
