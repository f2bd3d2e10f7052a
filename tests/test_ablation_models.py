"""The fine-tuning models of paper Table 5's ablations: a left-to-right (causal) model that
classifies from its last real token, and the "+ BiLSTM" heads of run_classifier.py and
run_squad.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import SAMPLE_DATA, run_script, tiny_config_dict

from bert_tf.classification.objective import Classification
from bert_tf.config import BertConfig
from bert_tf.modeling.classifier import BertClassifier
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.span_labeler import BertSpanLabeler
from bert_tf.squad.objective import SpanExtraction

CONFIG = BertConfig(**tiny_config_dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))
CAUSAL = BertConfig(**dict(CONFIG.to_dict(), causal_attention=True))
IDS = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12]], "int32")


def inputs(ids: np.ndarray) -> dict:
    return {"input_ids": ids, "input_mask": (ids > 0).astype("int32"), "segment_ids": 0 * ids}


def test_a_causal_encoder_pools_its_last_real_token():
    encoder = BertEncoder(CAUSAL)
    outputs = encoder(inputs(IDS))
    sequence = np.asarray(outputs["sequence_output"])
    expected = encoder.pooler(sequence[[0, 1], [2, 4]])  # the last real positions
    np.testing.assert_allclose(outputs["pooled_output"], expected, atol=1e-6)
    # More padding changes nothing: the last real token and all before it are the same.
    padded = np.pad(IDS, ((0, 0), (0, 3)))
    np.testing.assert_allclose(
        encoder(inputs(padded))["pooled_output"], outputs["pooled_output"], atol=1e-5
    )


def test_a_bidirectional_encoder_still_pools_cls():
    encoder = BertEncoder(CONFIG)
    outputs = encoder(inputs(IDS))
    expected = encoder.pooler(np.asarray(outputs["sequence_output"])[:, 0])
    np.testing.assert_allclose(outputs["pooled_output"], expected, atol=1e-6)


def test_the_causal_pooled_output_depends_on_every_token():
    encoder = BertEncoder(CAUSAL)
    changed_first = IDS.copy()
    changed_first[:, 1] = 20  # a token in the middle of both sequences
    before, after = (encoder(inputs(ids))["pooled_output"] for ids in (IDS, changed_first))
    assert np.abs(np.asarray(before) - np.asarray(after)).min(axis=-1).max() > 0


def test_the_bilstm_classifier_reads_the_sequence_and_skips_padding():
    model = BertClassifier(CONFIG, 3, bilstm_units=8)
    logits = np.asarray(model(inputs(IDS))["logits"])
    assert logits.shape == (2, 3)
    assert model.get_layer("bilstm").forward_layer.units == 8
    padded = np.asarray(model(inputs(np.pad(IDS, ((0, 0), (0, 3)))))["logits"])
    np.testing.assert_allclose(padded, logits, atol=1e-5)
    # The BiLSTM takes the pooler's place: the pooler is neither trained nor decayed.
    trained = {id(v) for v in Classification(3, bilstm_units=8).trainable_variables(model)}
    assert not trained & {id(v) for v in model.encoder.pooler.trainable_variables}
    assert {id(v) for v in model.get_layer("bilstm").trainable_variables} <= trained


def test_the_bilstm_span_labeler_scores_every_position_from_the_bilstm():
    model = BertSpanLabeler(CONFIG, bilstm_units=8)
    outputs = model(inputs(IDS))
    assert outputs["start_logits"].shape == (2, 5)
    assert model.head.output_weights.shape == (2, 16)  # [2, 2 * units]
    trained = {id(v) for v in SpanExtraction(bilstm_units=8).trainable_variables(model)}
    assert {id(v) for v in model.get_layer("bilstm").trainable_variables} <= trained


def test_the_bilstm_models_rebuild_from_their_config():
    model = BertClassifier(CONFIG, 2, bilstm_units=4)
    again = BertClassifier.from_config(model.get_config())
    assert again.bilstm_units == 4
    assert BertSpanLabeler.from_config(BertSpanLabeler(CONFIG, 4).get_config()).bilstm_units == 4


WORDS = ["the", "a", "man", "dog", "house", "river", "walked", "saw", "near", "old", "city"]


def anywhere_rows(count: int, seed: int) -> list[list[str]]:
    """SST-2-format rows whose label is whether "good" occurs anywhere in the sentence: at the
    start as often as at the end, so that a causal [CLS] (which sees only itself) cannot tell."""
    rng = np.random.default_rng(seed)
    rows = [["sentence", "label"]]
    for i in range(count):
        words = list(rng.choice(WORDS, rng.integers(4, 12)))
        label = i % 2
        if label:
            words.insert(int(rng.integers(0, len(words) + 1)), "good")
        rows.append([" ".join(words), str(label)])
    return rows


@pytest.fixture(scope="module")
def anywhere_task(tmp_path_factory):
    root = tmp_path_factory.mktemp("anywhere")
    (root / "SST-2").mkdir()
    for split, count, seed in (("train", 320, 0), ("dev", 100, 1)):
        lines = ["\t".join(row) + "\n" for row in anywhere_rows(count, seed)]
        (root / "SST-2" / f"{split}.tsv").write_text("".join(lines))
    config = dict(tiny_config_dict(vocab_size=30522), causal_attention=True)
    (root / "bert_config.json").write_text(json.dumps(config))
    return root


@pytest.mark.parametrize("bilstm", [False, True])
def test_a_causal_model_learns_a_sentence_task_whose_signal_is_anywhere(anywhere_task, bilstm):
    output_dir = anywhere_task / f"out_bilstm_{bilstm}"
    result = run_script(
        "run_classifier.py",
        "--task_name=SST-2",
        f"--data_dir={anywhere_task / 'SST-2'}",
        f"--vocab_file={SAMPLE_DATA / 'vocab.txt'}",
        f"--bert_config_file={anywhere_task / 'bert_config.json'}",
        f"--output_dir={output_dir}",
        "--do_train",
        "--do_eval",
        "--max_seq_length=16",
        "--train_batch_size=16",
        "--num_train_epochs=6",
        "--learning_rate=2e-3",
        "--seed=1",
        f"--bilstm={bilstm}",
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = (output_dir / "eval_results.txt").read_text().splitlines()
    results = {k: float(v) for k, v in (line.split(" = ") for line in lines)}
    # The majority class is 0.5; a causal model pooled at [CLS] stays there.
    assert results["eval_accuracy"] >= 0.9
