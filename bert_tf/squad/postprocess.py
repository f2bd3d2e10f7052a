"""From start and end logits to answers, as the original's `write_predictions`:
predictions.json, nbest_predictions.json and (SQuAD 2.0) null_odds.json.

For each example, every window proposes the spans between its `n_best_size` best starts
and `n_best_size` best ends that lie in the context, start where the window has the most
context, do not end before they start and are at most `max_answer_length` pieces long. The
spans are ranked by start_logit + end_logit; each is de-tokenized and projected back onto the
original text (`get_final_text`), and the n-best texts (each once) are kept with their softmax
probabilities. For SQuAD 2.0 the null answer ([CLS] as start and end, its lowest score over
the windows) competes too: the prediction is "" when null score - best non-null score >
`null_score_diff_threshold`, and that difference is the question's entry in null_odds.json.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import logging
import math
import os
from collections.abc import Sequence

import numpy as np

from bert_tf.io.fileio import atomic_open
from bert_tf.squad.data import SquadExample
from bert_tf.squad.features import InputFeatures
from bert_tf.tokenization import BasicTokenizer

logger = logging.getLogger(__name__)

# The original's starting value for the lowest null score: "large and positive".
NO_NULL_SCORE = 1000000


@dataclasses.dataclass
class RawResult:
    unique_id: int
    start_logits: np.ndarray  # [S]
    end_logits: np.ndarray  # [S]


@dataclasses.dataclass
class _Candidate:
    feature_index: int
    start_index: int
    end_index: int
    start_logit: float
    end_logit: float


def best_indexes(logits: np.ndarray, n_best_size: int) -> list[int]:
    """The positions of the n largest logits, largest first (ties: the lower position)."""
    return np.argsort(-np.asarray(logits, np.float64), kind="stable")[:n_best_size].tolist()


def compute_softmax(scores: Sequence[float]) -> list[float]:
    if not scores:
        return []
    top = max(scores)
    exps = [math.exp(score - top) for score in scores]
    total = sum(exps)
    return [e / total for e in exps]


def get_final_text(
    pred_text: str, orig_text: str, do_lower_case: bool, verbose_logging: bool = False
) -> str:
    """Projects a de-tokenized prediction back onto the original words' text.

    `orig_text` (the whole words of the span, say "Steve Smith's") holds more than the
    prediction ("steve smith"), which is normalized (lower-cased, accents stripped). The
    original words are basic-tokenized the same way; where that text and `orig_text` have
    the same characters apart from spaces, they align character for character and the
    prediction's characters map back to "Steve Smith". When the alignment fails, the
    original words are the answer. (As the original, the prediction is found with `find`,
    so at its first occurrence in the words.)
    """
    tok_text = " ".join(BasicTokenizer(do_lower_case=do_lower_case).tokenize(orig_text))
    start = tok_text.find(pred_text)
    if start == -1:
        if verbose_logging:
            logger.info("unable to find text %r in %r", pred_text, orig_text)
        return orig_text
    end = start + len(pred_text) - 1

    orig_ns_to_s = [i for i, c in enumerate(orig_text) if c != " "]
    tok_ns_to_s = [i for i, c in enumerate(tok_text) if c != " "]
    if len(orig_ns_to_s) != len(tok_ns_to_s):
        if verbose_logging:
            logger.info("length not equal after stripping spaces: %r vs %r", orig_text, tok_text)
        return orig_text
    tok_s_to_ns = {s: ns for ns, s in enumerate(tok_ns_to_s)}
    if start not in tok_s_to_ns:
        if verbose_logging:
            logger.info("could not map the start of %r back to %r", pred_text, orig_text)
        return orig_text
    if end not in tok_s_to_ns:
        if verbose_logging:
            logger.info("could not map the end of %r back to %r", pred_text, orig_text)
        return orig_text
    return orig_text[orig_ns_to_s[tok_s_to_ns[start]] : orig_ns_to_s[tok_s_to_ns[end]] + 1]


def _window_candidates(
    feature: InputFeatures,
    result: RawResult,
    feature_index: int,
    n_best_size: int,
    max_answer_length: int,
) -> list[_Candidate]:
    """The valid spans among the window's best starts x best ends, in the original's order
    (by start rank, then end rank)."""
    starts = np.array(best_indexes(result.start_logits, n_best_size))
    ends = np.array(best_indexes(result.end_logits, n_best_size))
    in_context = feature.token_to_orig_map  # positions of context pieces (< len(tokens))
    start_ok = np.array(
        [int(s) in in_context and feature.token_is_max_context.get(int(s), False) for s in starts]
    )
    end_ok = np.array([int(e) in in_context for e in ends])
    length = ends[None, :] - starts[:, None] + 1  # [n, n]
    valid = start_ok[:, None] & end_ok[None, :] & (length >= 1) & (length <= max_answer_length)
    return [
        _Candidate(
            feature_index,
            int(starts[i]),
            int(ends[j]),
            float(result.start_logits[starts[i]]),
            float(result.end_logits[ends[j]]),
        )
        for i, j in zip(*np.nonzero(valid), strict=True)
    ]


# Over 60 lines: the original's write_predictions, step for step, kept whole to read beside it.
def compute_predictions(
    examples: Sequence[SquadExample],
    features: Sequence[InputFeatures],
    results: Sequence[RawResult],
    n_best_size: int,
    max_answer_length: int,
    do_lower_case: bool,
    version_2_with_negative: bool = False,
    null_score_diff_threshold: float = 0.0,
    verbose_logging: bool = False,
) -> tuple[dict, dict, dict]:
    """(predictions, nbest, null_odds): qas_id -> answer text, -> the n-best list of
    {text, probability, start_logit, end_logit}, and (SQuAD 2.0) -> null score minus the best
    non-null score. In example order, as the original's files."""
    features_of = collections.defaultdict(list)
    for feature in features:
        features_of[feature.example_index].append(feature)
    result_of = {result.unique_id: result for result in results}

    predictions: dict = collections.OrderedDict()
    all_nbest: dict = collections.OrderedDict()
    null_odds: dict = collections.OrderedDict()
    for example_index, example in enumerate(examples):
        windows = features_of[example_index]
        candidates: list[_Candidate] = []
        # The null answer's score is its lowest over the windows.
        score_null = NO_NULL_SCORE
        null = _Candidate(0, 0, 0, 0.0, 0.0)
        for feature_index, feature in enumerate(windows):
            result = result_of[feature.unique_id]
            if version_2_with_negative:
                start0, end0 = float(result.start_logits[0]), float(result.end_logits[0])
                if start0 + end0 < score_null:
                    score_null = start0 + end0
                    null = _Candidate(feature_index, 0, 0, start0, end0)
            candidates += _window_candidates(
                feature, result, feature_index, n_best_size, max_answer_length
            )
        if version_2_with_negative:
            candidates.append(null)
        # Stable: equal scores keep the order above.
        candidates.sort(key=lambda c: c.start_logit + c.end_logit, reverse=True)

        nbest = []  # (text, start_logit, end_logit)
        seen = set()
        for candidate in candidates:
            if len(nbest) >= n_best_size:
                break
            if candidate.start_index > 0:
                text = _answer_text(
                    example,
                    windows[candidate.feature_index],
                    candidate,
                    do_lower_case,
                    verbose_logging,
                )
                if text in seen:
                    continue
            else:
                text = ""
            seen.add(text)
            nbest.append((text, candidate.start_logit, candidate.end_logit))
        if version_2_with_negative and "" not in seen:
            nbest.append(("", null.start_logit, null.end_logit))
        if not nbest:
            # As the original: in rare cases no span is valid; a placeholder answer.
            nbest.append(("empty", 0.0, 0.0))

        probabilities = compute_softmax([start + end for _, start, end in nbest])
        all_nbest[example.qas_id] = [
            collections.OrderedDict(
                text=text, probability=probability, start_logit=start, end_logit=end
            )
            for (text, start, end), probability in zip(nbest, probabilities, strict=True)
        ]
        if not version_2_with_negative:
            predictions[example.qas_id] = nbest[0][0]
            continue
        best_non_null = next((entry for entry in nbest if entry[0]), None)
        if best_non_null is None:
            # No span anywhere (an empty context): the null answer, at the null score.
            null_odds[example.qas_id] = float(score_null)
            predictions[example.qas_id] = ""
            continue
        score_diff = score_null - best_non_null[1] - best_non_null[2]
        null_odds[example.qas_id] = score_diff
        predictions[example.qas_id] = (
            "" if score_diff > null_score_diff_threshold else (best_non_null[0])
        )
    return predictions, all_nbest, null_odds


def _answer_text(
    example: SquadExample,
    feature: InputFeatures,
    candidate: _Candidate,
    do_lower_case: bool,
    verbose_logging: bool,
) -> str:
    """The span's pieces de-tokenized ("##" joins), projected onto the original words."""
    pieces = feature.tokens[candidate.start_index : candidate.end_index + 1]
    orig_start = feature.token_to_orig_map[candidate.start_index]
    orig_end = feature.token_to_orig_map[candidate.end_index]
    tok_text = " ".join(pieces).replace(" ##", "").replace("##", "")
    tok_text = " ".join(tok_text.split())
    orig_text = " ".join(example.doc_tokens[orig_start : orig_end + 1])
    return get_final_text(tok_text, orig_text, do_lower_case, verbose_logging)


PREDICTIONS_FILE = "predictions.json"
NBEST_FILE = "nbest_predictions.json"
NULL_ODDS_FILE = "null_odds.json"


def write_predictions(
    output_dir: str, predictions: dict, nbest: dict, null_odds: dict | None = None
) -> list[str]:
    """Writes the original's files (JSON, indent 4, as its `json.dumps`), each whole or not
    at all; returns their paths."""
    files = [(PREDICTIONS_FILE, predictions), (NBEST_FILE, nbest)]
    if null_odds is not None:
        files.append((NULL_ODDS_FILE, null_odds))
    paths = []
    for name, content in files:
        path = os.path.join(output_dir, name)
        with atomic_open(path) as f:
            f.write(json.dumps(content, indent=4) + "\n")
        paths.append(path)
    return paths
