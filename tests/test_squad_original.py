"""bert_tf.squad against the original run_squad.py's own outputs (tests/fixtures/squad, made
by running the original; see its README): the same examples, the same windows with every
token, id, map and max-context flag, the same training labels, and the same predictions.json,
nbest_predictions.json and null_odds.json for the same logits, value for value."""

from __future__ import annotations

import json

import pytest
from conftest import SQUAD_FEATURE_SETS, SQUAD_FIXTURES, recipe_logits, squad_features

from bert_tf.squad.postprocess import RawResult, compute_predictions

SQUAD = SQUAD_FIXTURES


def original_features(name: str) -> tuple[dict, list[dict]]:
    """The recorded features, rebuilt as the fixture README says."""
    record = json.loads((SQUAD / f"original_features_{name}.json").read_text())
    examples, columns = record["examples"], record["features"]
    features = []
    for i in range(len(columns["unique_id"])):
        example = columns["example_index"][i]
        context = record["contexts"][examples["context_index"][example]]
        query = (
            examples["query_tokens"][example].split(" ")
            if examples["query_tokens"][example]
            else []
        )
        s, length = columns["doc_span_start"][i], columns["doc_span_length"][i]
        pieces = context["wordpieces"].split(" ")[s : s + length]
        features.append(
            {
                "unique_id": columns["unique_id"][i],
                "example_index": example,
                "doc_span_index": columns["doc_span_index"][i],
                "tokens": ["[CLS]", *query, "[SEP]", *pieces, "[SEP]"],
                "input_ids": [
                    101,
                    *examples["query_ids"][example],
                    102,
                    *context["wordpiece_ids"][s : s + length],
                    102,
                ],  # fmt: skip
                "token_to_orig_map": {
                    len(query) + 2 + j: context["wordpiece_to_orig"][s + j] for j in range(length)
                },
                "token_is_max_context": {
                    len(query) + 2 + j: flag == "1"
                    for j, flag in enumerate(columns["token_is_max_context"][i])
                },
                "start_position": (columns.get("start_position") or [None] * (i + 1))[i],
                "end_position": (columns.get("end_position") or [None] * (i + 1))[i],
            }
        )
    return record, features


@pytest.mark.parametrize("name", list(SQUAD_FEATURE_SETS))
def test_examples_and_windows_equal_the_originals(name):
    record, expected = original_features(name)
    examples, features = squad_features(name)
    assert [e.qas_id for e in examples] == record["examples"]["qas_id"]
    assert [len(e.doc_tokens) for e in examples] == record["examples"]["num_doc_tokens"]
    if record["is_training"]:
        assert [e.start_position for e in examples] == record["examples"]["start_position"]
        assert [e.end_position for e in examples] == record["examples"]["end_position"]
        assert [e.is_impossible for e in examples] == record["examples"]["is_impossible"]
    assert len(features) == len(expected) == record["num_features"]
    for ours, theirs in zip(features, expected, strict=True):
        n = len(theirs["tokens"])
        assert ours.unique_id == theirs["unique_id"]
        assert (ours.example_index, ours.doc_span_index) == (
            theirs["example_index"],
            theirs["doc_span_index"],
        )
        assert ours.tokens == theirs["tokens"]
        assert ours.input_ids == theirs["input_ids"] + [0] * (96 - n)
        assert ours.input_mask == [1] * n + [0] * (96 - n)
        assert ours.token_to_orig_map == theirs["token_to_orig_map"]
        assert ours.token_is_max_context == theirs["token_is_max_context"]
        assert (ours.start_position, ours.end_position) == (
            theirs["start_position"],
            theirs["end_position"],
        )


@pytest.mark.parametrize("name", ["v1", "v2", "v2_threshold"])
def test_prediction_files_equal_the_originals_for_the_same_logits(name):
    record = json.loads((SQUAD / f"original_predictions_{name}.json").read_text())
    examples, features = squad_features("v2_predict" if name.startswith("v2") else "v1_predict")
    results = [RawResult(f.unique_id, *recipe_logits(f.unique_id)) for f in features]
    predictions, nbest, null_odds = compute_predictions(
        examples,
        features,
        results,
        record["n_best_size"],
        record["max_answer_length"],
        record["do_lower_case"],
        record["version_2_with_negative"],
        record["null_score_diff_threshold"],
    )
    # Round-tripped through JSON, as the files are.
    predictions, nbest, null_odds = json.loads(json.dumps([predictions, nbest, null_odds]))
    crashed = set(record["original_raised"])
    assert {k: v for k, v in predictions.items() if k not in crashed} == record["predictions"]
    assert {k: v for k, v in nbest.items() if k not in crashed} == record["nbest"]
    if record["version_2_with_negative"]:
        assert {k: v for k, v in null_odds.items() if k not in crashed} == record["null_odds"]
    else:
        assert null_odds == {}
    # Where the original raises (its n-best holds only the null answer), we answer "" and
    # record the null score as the null odds.
    for qid in crashed:
        assert predictions[qid] == ""
        assert [entry["text"] for entry in nbest[qid]] == [""]
