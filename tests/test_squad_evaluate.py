"""bert_tf.squad.evaluate scores as the official evaluate-v1.1.py and evaluate-v2.0.py do.

The expected numbers are worked out by hand in the comments, on small made-up questions.
"""

from __future__ import annotations

import json
import logging

import pytest
from conftest import REPO

from bert_tf.squad.evaluate import (
    evaluate_v1,
    evaluate_v2,
    gold_answers_from_squad,
    normalize_answer,
)

SQUAD_DATA = REPO.parent / "shared" / "data" / "squad"

V2_KEYS = ["exact", "f1", "total"]
SPLIT_KEYS = [f"{prefix}_{key}" for prefix in ("HasAns", "NoAns") for key in V2_KEYS]
BEST_KEYS = ["best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh"]


# --- normalization ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, normalized",
    [
        ("  The  Quick,  BROWN fox!  ", "quick brown fox"),
        ("An apple a day", "apple day"),
        ("theory of anything", "theory of anything"),  # articles only as whole words
        ("the-end", "theend"),  # punctuation goes first, so no article is left
        ("don't stop", "dont stop"),
        ("“quoted”", "“quoted”"),  # only ASCII punctuation (string.punctuation) is removed
        ("The", ""),
        ("", ""),
    ],
)
def test_normalize_answer_lowercases_drops_punctuation_articles_and_extra_spaces(text, normalized):
    assert normalize_answer(text) == normalized


# --- SQuAD v1.1 ---------------------------------------------------------------------------


def test_exact_match_ignores_case_punctuation_and_articles():
    result = evaluate_v1({"q": ["The Eiffel Tower"]}, {"q": "eiffel  tower."})
    assert result == {"exact_match": 100.0, "f1": 100.0}


def test_v1_result_has_the_official_keys_in_order():
    assert list(evaluate_v1({"q": ["x"]}, {"q": "x"})) == ["exact_match", "f1"]


def test_f1_is_max_over_gold_answers():
    # Prediction tokens: [denver, broncos].
    # Gold "Broncos": 1 shared; P = 1/2, R = 1, F1 = 2/3.
    # Gold "Denver Broncos team": 2 shared; P = 1, R = 2/3, F1 = (4/3) / (5/3) = 0.8.
    # Neither is an exact match.
    result = evaluate_v1({"q": ["Broncos", "Denver Broncos team"]}, {"q": "the Denver Broncos"})
    assert result["exact_match"] == 0.0
    assert result["f1"] == pytest.approx(80.0)


def test_f1_counts_a_repeated_token_only_as_often_as_the_other_side_has_it():
    # Prediction [go, go, go], gold [go]: 1 shared; P = 1/3, R = 1, F1 = (2/3) / (4/3) = 0.5.
    assert evaluate_v1({"q": ["go"]}, {"q": "go go go"})["f1"] == pytest.approx(50.0)


def test_f1_of_disjoint_tokens_is_zero():
    assert evaluate_v1({"q": ["red car"]}, {"q": "blue bike"}) == {"exact_match": 0.0, "f1": 0.0}


def test_unanswered_question_scores_zero_in_v1(caplog):
    gold = {"q1": ["Paris"], "q2": ["Rome"]}
    # q2 has no prediction: it stays in the total with score 0, so 1/2. The prediction for a
    # question not in the gold is ignored.
    with caplog.at_level(logging.WARNING):
        result = evaluate_v1(gold, {"q1": "Paris", "elsewhere": "Rome"})
    assert result == {"exact_match": 50.0, "f1": 50.0}
    assert "1 questions have no prediction; they score 0" in caplog.text


def test_v1_scores_are_averaged_over_questions():
    # q1: exact, F1 1. q2: [big, cat] vs [big, dog]: P = R = 1/2, F1 = 1/2; not exact.
    # q3: no shared token, 0. Exact (1 + 0 + 0) / 3; F1 (1 + 0.5 + 0) / 3 = 0.5.
    gold = {"q1": ["Paris"], "q2": ["the big dog"], "q3": ["1984"]}
    result = evaluate_v1(gold, {"q1": "paris", "q2": "big cat", "q3": "1985"})
    assert result["exact_match"] == pytest.approx(100 / 3)
    assert result["f1"] == pytest.approx(50.0)


def test_v1_rejects_a_question_without_gold_answers():
    with pytest.raises(ValueError, match="no gold answer"):
        evaluate_v1({"q": []}, {"q": ""})


# --- SQuAD v2.0 ---------------------------------------------------------------------------


def test_v2_empty_gold_scores_1_only_for_empty_prediction():
    gold = {"n1": [], "n2": []}
    result = evaluate_v2(gold, {"n1": "", "n2": "something"})
    # n1: right (exact 1, F1 1). n2: any text on an unanswerable question scores 0.
    assert result == {
        "exact": 50.0,
        "f1": 50.0,
        "total": 2,
        "NoAns_exact": 50.0,
        "NoAns_f1": 50.0,
        "NoAns_total": 2,
    }


def test_v2_empty_prediction_on_answerable_question_scores_zero():
    result = evaluate_v2({"q": ["Paris"]}, {"q": ""})
    assert (result["exact"], result["f1"]) == (0.0, 0.0)


def test_v2_gold_answers_that_normalize_to_nothing_are_dropped():
    # "The" normalizes to "": the question is left with no scorable answer, so only a
    # prediction normalizing to "" is right ("the" as well as ""). It still counts as a
    # has-answer question: that is decided on the raw gold list.
    gold = {"q1": ["The"], "q2": ["The"], "q3": ["The"]}
    result = evaluate_v2(gold, {"q1": "", "q2": "the", "q3": "theory"})
    assert result["exact"] == pytest.approx(200 / 3)
    assert result["f1"] == pytest.approx(200 / 3)
    assert result["HasAns_total"] == 3
    assert "NoAns_total" not in result


def test_v2_skips_unanswered_questions(caplog):
    # Unlike v1.1, q2 (no prediction) is not in the total at all.
    gold = {"q1": ["Paris"], "q2": ["Rome"]}
    with caplog.at_level(logging.WARNING):
        result = evaluate_v2(gold, {"q1": "Paris"})
    assert result == {
        "exact": 100.0,
        "f1": 100.0,
        "total": 1,
        "HasAns_exact": 100.0,
        "HasAns_f1": 100.0,
        "HasAns_total": 1,
    }
    assert "1 questions have no prediction" in caplog.text


# Two answerable and two unanswerable questions, shared by the tests below.
GOLD = {"h1": ["Paris"], "h2": ["the big dog"], "n1": [], "n2": []}
PREDICTIONS = {"h1": "paris", "h2": "big cat", "n1": "", "n2": "dog"}
# Raw exact: h1 1, h2 0, n1 1, n2 0.
# Raw F1:    h1 1, h2 1/2 ([big, cat] vs [big, dog]: P = R = 1/2), n1 1, n2 0.


def test_has_ans_and_no_ans_splits():
    result = evaluate_v2(GOLD, PREDICTIONS)
    assert list(result) == V2_KEYS + SPLIT_KEYS  # no best_* without na_probs
    assert result == {
        "exact": 50.0,  # (1 + 0 + 1 + 0) / 4
        "f1": 62.5,  # (1 + 0.5 + 1 + 0) / 4
        "total": 4,
        "HasAns_exact": 50.0,  # (1 + 0) / 2
        "HasAns_f1": 75.0,  # (1 + 0.5) / 2
        "HasAns_total": 2,
        "NoAns_exact": 50.0,  # (1 + 0) / 2
        "NoAns_f1": 50.0,
        "NoAns_total": 2,
    }


def test_v2_splits_are_left_out_when_there_are_no_such_questions():
    assert list(evaluate_v2({"q": ["x"]}, {"q": "x"})) == V2_KEYS + SPLIT_KEYS[:3]
    assert list(evaluate_v2({"q": []}, {"q": ""})) == V2_KEYS + SPLIT_KEYS[3:]


def test_na_prob_above_threshold_makes_the_prediction_no_answer():
    na_probs = {"h1": 0.05, "h2": 0.2, "n1": 0.1, "n2": 0.8}
    # Above 0.1: h2 (answerable, so now 0.0) and n2 (unanswerable, so now 1.0). n1 is at 0.1,
    # not above, and keeps its raw score (1).
    result = evaluate_v2(GOLD, PREDICTIONS, na_probs, na_prob_thresh=0.1)
    assert list(result) == V2_KEYS + SPLIT_KEYS + BEST_KEYS
    assert result["exact"] == 75.0  # h1 1, h2 0, n1 1, n2 1
    assert result["f1"] == 75.0  # h1 1, h2 0 (not 1/2), n1 1, n2 1
    assert (result["HasAns_exact"], result["HasAns_f1"]) == (50.0, 50.0)
    assert (result["NoAns_exact"], result["NoAns_f1"]) == (100.0, 100.0)


def test_na_prob_equal_to_threshold_keeps_the_prediction():
    assert evaluate_v2({"q": ["x"]}, {"q": "x"}, {"q": 0.5}, 0.5)["exact"] == 100.0
    assert evaluate_v2({"q": ["x"]}, {"q": "x"}, {"q": 0.5}, 0.49)["exact"] == 0.0


def test_best_threshold_matches_hand_computed():
    na_probs = {"h1": 0.05, "h2": 0.2, "n1": 0.1, "n2": 0.8}
    # Start from "all unanswerable": 2 points (n1, n2). Answer in order of na_prob:
    #   h1 (0.05): answerable, + raw score;  n1 (0.1): unanswerable, empty prediction, + 0;
    #   h2 (0.2): answerable, + raw score;   n2 (0.8): unanswerable, "dog", - 1.
    # Exact: 2 -> 3 (best, at 0.05) -> 3 -> 3 -> 2: best 3 / 4 = 75%.
    # F1:    2 -> 3 -> 3 -> 3.5 (best, at 0.2) -> 2.5: best 3.5 / 4 = 87.5%.
    # Both on the raw scores: with the thresholded ones (h2 0 at threshold 0.1) the best F1
    # would be 75% at 0.05.
    result = evaluate_v2(GOLD, PREDICTIONS, na_probs, na_prob_thresh=0.1)
    assert result["best_exact"] == 75.0
    assert result["best_exact_thresh"] == 0.05
    assert result["best_f1"] == 87.5
    assert result["best_f1_thresh"] == 0.2


def test_best_threshold_is_zero_when_answering_never_helps():
    # 1 point to start (n); answering h (wrong, 0) then n ("y", -1) never beats it: 1 / 2.
    result = evaluate_v2({"h": ["x"], "n": []}, {"h": "z", "n": "y"}, {"h": 0.1, "n": 0.2})
    assert (result["best_exact"], result["best_exact_thresh"]) == (50.0, 0.0)
    assert (result["best_f1"], result["best_f1_thresh"]) == (50.0, 0.0)


def test_best_threshold_ties_follow_the_order_of_na_probs():
    gold, predictions = {"h": ["x"], "n": []}, {"h": "x", "n": "y"}
    # h first: 1 -> 2 (best, at 0.3) -> 1, so 2 / 2.
    result = evaluate_v2(gold, predictions, {"h": 0.3, "n": 0.3})
    assert (result["best_exact"], result["best_exact_thresh"]) == (100.0, 0.3)
    # n first: 1 -> 0 -> 1, never above the start, so 1 / 2 at 0.0.
    result = evaluate_v2(gold, predictions, {"n": 0.3, "h": 0.3})
    assert (result["best_exact"], result["best_exact_thresh"]) == (50.0, 0.0)


def test_best_threshold_starts_from_every_unanswerable_question_of_the_gold():
    # As the official script: the start counts n2 although it has no prediction (2 points),
    # but the result is divided by the scored questions only (2), so it can pass 100%.
    # h (0.1): + 1 -> 3 (best, at 0.1); n1 (0.2): empty prediction, + 0.
    gold = {"h": ["x"], "n1": [], "n2": []}
    result = evaluate_v2(gold, {"h": "x", "n1": ""}, {"h": 0.1, "n1": 0.2})
    assert result["total"] == 2
    assert (result["best_exact"], result["best_exact_thresh"]) == (150.0, 0.1)


def test_v2_without_na_probs_has_no_best_keys_and_no_threshold_effect():
    result = evaluate_v2(GOLD, PREDICTIONS, na_prob_thresh=0.0)  # every na_prob is 0.0
    assert not set(BEST_KEYS) & set(result)
    assert (result["exact"], result["f1"]) == (50.0, 62.5)


def test_v2_requires_a_no_answer_probability_for_every_scored_question():
    with pytest.raises(ValueError, match="no-answer probability"):
        evaluate_v2({"q": ["x"]}, {"q": "x"}, {})


def test_v2_rejects_predictions_for_no_gold_question():
    with pytest.raises(ValueError, match="no question to evaluate"):
        evaluate_v2({"q": ["x"]}, {"other": "x"})


# --- reading the gold ---------------------------------------------------------------------


def test_gold_answers_from_squad_keeps_file_order_and_all_answer_texts():
    dataset = {
        "version": "v2.0",
        "data": [
            {
                "title": "A",
                "paragraphs": [
                    {
                        "context": "...",
                        "qas": [
                            {
                                "id": "q2",
                                "answers": [
                                    {"text": "Paris", "answer_start": 0},
                                    {"text": "Paris", "answer_start": 0},
                                    {"text": "in Paris", "answer_start": 3},
                                ],
                            },
                            {
                                "id": "q1",
                                "answers": [],
                                "plausible_answers": [{"text": "Rome", "answer_start": 9}],
                                "is_impossible": True,
                            },
                        ],
                    }
                ],
            },
            {"title": "B", "paragraphs": [{"context": "...", "qas": [{"id": "q3"}]}]},
        ],
    }
    gold = gold_answers_from_squad(dataset)
    assert list(gold) == ["q2", "q1", "q3"]
    assert gold == {"q2": ["Paris", "Paris", "in Paris"], "q1": [], "q3": []}


# --- the official dev sets ----------------------------------------------------------------


def _load_squad(name: str) -> dict:
    path = SQUAD_DATA / name
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def test_first_gold_answer_scores_100_on_squad_v1_dev():
    gold = gold_answers_from_squad(_load_squad("dev-v1.1.json"))
    predictions = {qid: answers[0] for qid, answers in gold.items()}
    assert evaluate_v1(gold, predictions) == {"exact_match": 100.0, "f1": 100.0}


def test_predicting_no_answer_everywhere_on_squad_v2_dev():
    gold = gold_answers_from_squad(_load_squad("dev-v2.0-half.json"))
    result = evaluate_v2(gold, {qid: "" for qid in gold})
    assert result["total"] == len(gold)
    assert result["NoAns_exact"] == 100.0
    assert result["HasAns_exact"] == 0.0
    assert result["exact"] == 100 * result["NoAns_total"] / result["total"]
