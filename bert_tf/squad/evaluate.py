"""The official SQuAD v1.1 and v2.0 evaluation (evaluate-v1.1.py, evaluate-v2.0.py), in our words.

run_squad prints what these functions return, so its numbers are the numbers the leaderboard
scripts print for the same predictions: same normalization, same per-question scores, same
averages (summed in the same order, so equal to the last bit), same output keys in the same
order. Standard library only.

Where the official behaviour is surprising, we keep it (and say why at the spot):

- Answers are compared after `normalize_answer`, which removes "a", "an", "the" only as whole
  words ("theory" keeps its "the"), and removes punctuation *before* looking for articles, so
  "the-end" becomes "theend" and keeps no article.
- v1.1 counts a question without a prediction in the total, with score 0; v2.0 leaves it out
  of the scores (and of the total) altogether.
- v2.0's gold answers that normalize to "" are dropped; a question left with none is
  unanswerable and only the empty prediction scores on it (exact and F1 both 1).
- v2.0's best threshold (`best_exact`, `best_f1`) is searched on the raw scores, not on the
  scores after `na_prob_thresh`, and it starts from "every question predicted unanswerable",
  counting every unanswerable question of the gold, predicted or not.
"""

from __future__ import annotations

import collections
import logging
import re
import string

logger = logging.getLogger(__name__)

_PUNCTUATION = frozenset(string.punctuation)
# `\b` on both sides: an article is removed only as a whole word. Replaced by a space (not
# deleted) so "a" in "x a y" cannot glue its neighbours; the whitespace fix follows.
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(s: str) -> str:
    """Lower-cases, removes ASCII punctuation, then the articles a/an/the, then collapses runs
    of whitespace to one space (and strips the ends), in that order as the official scripts."""
    text = s.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _token_f1(prediction_tokens: list[str], gold_tokens: list[str]) -> float:
    """Harmonic mean of token precision and recall over the multiset of shared tokens; 0 when
    no token is shared (also when either side is empty)."""
    shared = collections.Counter(prediction_tokens) & collections.Counter(gold_tokens)
    num_same = sum(shared.values())
    if num_same == 0:
        return 0
    precision = num_same / len(prediction_tokens)
    recall = num_same / len(gold_tokens)
    # Written as the official scripts write it, so the float is the same to the last bit.
    return (2 * precision * recall) / (precision + recall)


# --- SQuAD v1.1 ---------------------------------------------------------------------------


def _v1_exact(prediction: str, gold: str) -> bool:
    return normalize_answer(prediction) == normalize_answer(gold)


def _v1_f1(prediction: str, gold: str) -> float:
    return _token_f1(normalize_answer(prediction).split(), normalize_answer(gold).split())


def evaluate_v1(gold: dict[str, list[str]], predictions: dict[str, str]) -> dict:
    """evaluate-v1.1.py: `{"exact_match": ..., "f1": ...}`, in percent.

    `gold` maps each question id to its gold answer texts; a question scores the best of its
    gold answers. Every question of `gold` counts in the average; one missing from
    `predictions` scores 0 (predictions for questions not in `gold` are ignored).
    """
    if not gold:
        raise ValueError("no question to evaluate: the gold answers are empty")
    exact_scores, f1_scores = [], []
    unanswered = 0
    for qid, answers in gold.items():
        if not answers:
            # The official script would fail here (max of nothing); SQuAD v1.1 has no such
            # question, so this is a v2.0 file given to the v1.1 evaluation.
            raise ValueError(f"question {qid!r} has no gold answer (a SQuAD v2.0 file?)")
        if qid not in predictions:
            # In the total, with score 0 (unlike v2.0, which leaves the question out).
            unanswered += 1
            continue
        prediction = predictions[qid]
        exact_scores.append(max(_v1_exact(prediction, answer) for answer in answers))
        f1_scores.append(max(_v1_f1(prediction, answer) for answer in answers))
    if unanswered:
        logger.warning("%d questions have no prediction; they score 0", unanswered)
    total = len(gold)
    # 100.0 * sum / total, not 100 * mean: the official expression, so the same float.
    return {
        "exact_match": 100.0 * sum(exact_scores) / total,
        "f1": 100.0 * sum(f1_scores) / total,
    }


# --- SQuAD v2.0 ---------------------------------------------------------------------------


def _v2_tokens(s: str) -> list[str]:
    return normalize_answer(s).split() if s else []


def _v2_exact(gold: str, prediction: str) -> int:
    return int(normalize_answer(gold) == normalize_answer(prediction))


def _v2_f1(gold: str, prediction: str) -> float:
    gold_tokens, prediction_tokens = _v2_tokens(gold), _v2_tokens(prediction)
    if not gold_tokens or not prediction_tokens:
        # "No answer" on either side: right (1) only when both are "no answer".
        return int(gold_tokens == prediction_tokens)
    return _token_f1(prediction_tokens, gold_tokens)


def _v2_raw_scores(
    gold: dict[str, list[str]], predictions: dict[str, str]
) -> tuple[dict[str, int], dict[str, float]]:
    """Per-question exact and F1 before any no-answer threshold, for the predicted questions
    of `gold`, in the order of `gold`."""
    exact_scores: dict[str, int] = {}
    f1_scores: dict[str, float] = {}
    missing = 0
    for qid, answers in gold.items():
        if qid not in predictions:
            # Left out of the scores and of the total (unlike v1.1, which scores it 0).
            missing += 1
            continue
        # Gold answers that normalize to nothing (e.g. "The") cannot be matched by any text
        # but the empty one; the official script drops them, leaving "" if none remains.
        scorable = [answer for answer in answers if normalize_answer(answer)] or [""]
        prediction = predictions[qid]
        exact_scores[qid] = max(_v2_exact(answer, prediction) for answer in scorable)
        f1_scores[qid] = max(_v2_f1(answer, prediction) for answer in scorable)
    if missing:
        logger.warning(
            "%d questions have no prediction; they are left out of the scores (SQuAD v2.0)",
            missing,
        )
    return exact_scores, f1_scores


def _apply_no_answer_threshold(
    scores: dict, na_probs: dict[str, float], has_ans: dict[str, bool], na_prob_thresh: float
) -> dict:
    """A question whose no-answer probability is above the threshold is predicted
    unanswerable: it scores 1.0 when it is, 0.0 when it is not, whatever the text said."""
    return {
        qid: float(not has_ans[qid]) if na_probs[qid] > na_prob_thresh else score
        for qid, score in scores.items()
    }


def _eval_dict(exact: dict, f1: dict, qids: list[str]) -> dict:
    total = len(qids)
    return {
        "exact": 100.0 * sum(exact[qid] for qid in qids) / total,
        "f1": 100.0 * sum(f1[qid] for qid in qids) / total,
        "total": total,
    }


def _best_threshold(
    predictions: dict[str, str],
    raw_scores: dict,
    na_probs: dict[str, float],
    has_ans: dict[str, bool],
) -> tuple[float, float]:
    """The score and threshold of the best no-answer threshold, as the official script.

    Starts from "every question predicted unanswerable" (score: the number of unanswerable
    questions of the gold, predicted or not), then answers the questions one by one from the
    least to the most likely unanswerable, keeping the best running score. On raw scores.
    """
    score = best_score = sum(1 for answerable in has_ans.values() if not answerable)
    best_thresh = 0.0
    # sorted() is stable: ties keep the order of `na_probs`, as in the official script.
    for qid in sorted(na_probs, key=na_probs.get):
        if qid not in raw_scores:
            continue
        if has_ans[qid]:
            score += raw_scores[qid]
        elif predictions[qid]:
            score -= 1  # answering an unanswerable question loses its point
        if score > best_score:
            best_score, best_thresh = score, na_probs[qid]
    return 100.0 * best_score / len(raw_scores), best_thresh


def evaluate_v2(
    gold: dict[str, list[str]],
    predictions: dict[str, str],
    na_probs: dict[str, float] | None = None,
    na_prob_thresh: float = 1.0,
) -> dict:
    """evaluate-v2.0.py: `exact`, `f1`, `total`, then `HasAns_*` and `NoAns_*` (each only if
    there are such questions), then, when `na_probs` is given, `best_exact`,
    `best_exact_thresh`, `best_f1`, `best_f1_thresh`. Scores in percent.

    `gold` maps each question id to its gold answer texts, empty for an unanswerable question
    (the empty prediction is its right answer). Questions missing from `predictions` are left
    out. `na_probs` (default 0.0 for every prediction) gives each question's probability of
    having no answer; above `na_prob_thresh` the question counts as predicted unanswerable.
    """
    has_ans = {qid: bool(answers) for qid, answers in gold.items()}
    exact_raw, f1_raw = _v2_raw_scores(gold, predictions)
    if not exact_raw:
        raise ValueError("no question to evaluate: no gold question has a prediction")
    probs = {qid: 0.0 for qid in predictions} if na_probs is None else na_probs
    missing_probs = [qid for qid in exact_raw if qid not in probs]
    if missing_probs:
        raise ValueError(
            f"{len(missing_probs)} predicted questions have no no-answer probability, "
            f"e.g. {missing_probs[0]!r}"
        )
    exact = _apply_no_answer_threshold(exact_raw, probs, has_ans, na_prob_thresh)
    f1 = _apply_no_answer_threshold(f1_raw, probs, has_ans, na_prob_thresh)

    result = _eval_dict(exact, f1, list(exact))
    # The official script takes every such question of the gold here (and fails on a missing
    # prediction); we take the scored ones, which is the same when all are predicted.
    for prefix, answerable in (("HasAns", True), ("NoAns", False)):
        qids = [qid for qid, has in has_ans.items() if has is answerable and qid in exact]
        if qids:
            for key, value in _eval_dict(exact, f1, qids).items():
                result[f"{prefix}_{key}"] = value
    if na_probs is not None:
        result["best_exact"], result["best_exact_thresh"] = _best_threshold(
            predictions, exact_raw, na_probs, has_ans
        )
        result["best_f1"], result["best_f1_thresh"] = _best_threshold(
            predictions, f1_raw, na_probs, has_ans
        )
    return result


def gold_answers_from_squad(dataset: dict) -> dict[str, list[str]]:
    """Question id -> its gold answer texts, in file order, from a parsed SQuAD JSON file
    (v1.1 or v2.0). An unanswerable v2.0 question (or one without "answers") gives []; its
    "plausible_answers" are not gold answers."""
    return {
        qa["id"]: [answer["text"] for answer in qa.get("answers", [])]
        for article in dataset["data"]
        for paragraph in article["paragraphs"]
        for qa in paragraph["qas"]
    }
