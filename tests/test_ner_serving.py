"""The NER SavedModel (bert_tf.ner.serving) tags raw text as run_ner.py tags a document: the
graph splits text into CoNLL-style words as `conll_words` does, makes the windows of
features.py, and reads the entities off the model's logits as tagging.chunks does; the
exported SavedModel answers the same in a process that imports only tensorflow and
tensorflow_text."""

from __future__ import annotations

import json

import keras
import numpy as np
import pytest
import tensorflow as tf
from conftest import SAMPLE_DATA, served_json, tiny_config

from bert_tf.modeling.token_classifier import BertTokenClassifier
from bert_tf.ner.data import Document, Sentence, label_list
from bert_tf.ner.features import convert_documents_to_features
from bert_tf.ner.serving import EntityTagger, conll_words, conll_words_in_graph, export_ner
from bert_tf.ner.tagging import chunks
from bert_tf.tokenization import FullTokenizer

VOCAB = str(SAMPLE_DATA / "vocab.txt")
LABELS = label_list(["LOC", "MISC", "ORG", "PER"])
MAX_SEQ_LENGTH, DOC_STRIDE = 16, 5
TEXTS = [
    "EU rejects German call to boycott British lamb. Peter Blackburn (AP) said on Friday, "
    "1996-08-22, that the U.S. and Bosnia-Herzegovina's O'Neill (Reuters) disagreed.",
    "",
    "Café Zürich, 北京 and Montréal: naïve façade… «Ünïcödé» São Paulo!",
    "Germany.",
    "   \t\n",
    "\u200b is a word of control characters only; it is [UNK].",
    "Short one",
]


@pytest.mark.parametrize(
    "text, words",
    [
        ("(AP)", ["(", "AP", ")"]),
        ("Germany.", ["Germany", "."]),
        ("said, he", ["said", ",", "he"]),
        ("1996-08-22 Bosnia-Herzegovina O'Neill", ["1996-08-22", "Bosnia-Herzegovina", "O'Neill"]),
        ("the U.S. and e.g. this", ["the", "U.S.", "and", "e.g.", "this"]),
        ("(U.S.), Inc.", ["(", "U.S.", ")", ",", "Inc", "."]),
        ("...", [".", ".", "."]),
        ('"Yes!"', ['"', "Yes", "!", '"']),
        (".S. x.Y.. U.S", [".", "S", ".", "x.Y.", ".", "U.S"]),
        ("$5 +3% #1", ["$", "5", "+", "3", "%", "#", "1"]),
        ("北京是首都。", ["北", "京", "是", "首", "都", "。"]),
        ("Café\u3000«Zürich»\xa0naïve", ["Café", "«", "Zürich", "»", "naïve"]),
        ("a\u200bb \x00", ["a\u200bb", "\x00"]),
        ("", []),
        (" \t\r\n ", []),
    ],
)
def test_text_splits_into_conll_words(text, words):
    assert [w for w, _, _ in conll_words(text)] == words
    assert all(text[start:end] == w for w, start, end in conll_words(text))


def test_the_graph_splits_words_as_conll_words():
    # Every whitespace character, punctuation (ASCII, Unicode, the abbreviation period),
    # letters, digits, marks, CJK, control and astral characters, in random strings.
    whitespace = [chr(c) for c in range(0x3001) if chr(c).isspace()]
    alphabet = whitespace + list("aZé.,.'-()$%\"0") + ["\u0301", "«", "…", "。", "北", "\x00"]
    alphabet += ["\u200b", "\ufeff", "\U0001f600", "\U00020000", "ß", "Σ"]
    rng = np.random.default_rng(0)
    texts = ["".join(rng.choice(alphabet, int(rng.integers(0, 25)))) for _ in range(400)]
    texts += TEXTS
    _, words, start, end = conll_words_in_graph(tf.constant(texts))
    for text, w, s, e in zip(texts, words.to_list(), start.to_list(), end.to_list(), strict=True):
        got = [(x.decode(), int(i), int(j)) for x, i, j in zip(w, s, e, strict=True)]
        assert got == conll_words(text), repr(text)


class RecordedModel:
    """Calls the model and keeps what it was given and what it returned."""

    def __init__(self, model) -> None:
        self.model = model
        self.inputs = self.logits = None

    def __call__(self, inputs, training=False):
        outputs = self.model(inputs, training=training)
        self.inputs = {name: value.numpy() for name, value in inputs.items()}
        self.logits = outputs["logits"].numpy()
        return outputs


@pytest.fixture(scope="module")
def model():
    """A tiny random BertTokenClassifier whose classifier weights are large enough that the
    argmax label changes from word to word (all kinds of tag sequences occur)."""
    keras.utils.set_random_seed(0)
    model = BertTokenClassifier(tiny_config(), num_labels=len(LABELS))
    classifier = model.head
    rng = np.random.default_rng(1)
    classifier.output_weights.assign(rng.normal(0, 1, classifier.output_weights.shape))
    # Hidden states share a direction that would favour some labels everywhere: centre the
    # logits, then favour O, so that entities are separated by O as well as touching.
    ids = rng.integers(1000, 30000, (8, MAX_SEQ_LENGTH), dtype=np.int32)
    inputs = {"input_ids": ids, "input_mask": np.ones_like(ids), "segment_ids": 0 * ids}
    mean = model(inputs, training=False)["logits"].numpy().mean(axis=(0, 1))
    classifier.output_bias.assign(-mean + 4.0 * (np.array(LABELS) == "O"))
    return model


@pytest.fixture(scope="module")
def tagged(model) -> dict:
    """The graph run over TEXTS as one batch, and features.py's windows of the same words."""
    recorded = RecordedModel(model)
    tagger = EntityTagger(recorded, VOCAB, True, LABELS, MAX_SEQ_LENGTH, DOC_STRIDE)
    outputs = as_lists(tagger.tag(tf.constant(TEXTS)))
    documents = [
        Document([Sentence([w for w, _, _ in words], ["O"] * len(words), [], 1)])
        for words in map(conll_words, TEXTS)
    ]
    features = list(
        convert_documents_to_features(
            documents, LABELS, FullTokenizer(VOCAB), MAX_SEQ_LENGTH, DOC_STRIDE
        )
    )
    return {"outputs": outputs, "recorded": recorded, "features": features}


def as_lists(outputs: dict) -> dict:
    """The signature's outputs as nested lists, strings decoded."""
    return {
        name: [[s.decode() for s in row] for row in value.numpy()]
        if value.dtype == tf.string
        else value.numpy().tolist()
        for name, value in outputs.items()
    }


def served_entities(outputs: dict) -> list[list[tuple]]:
    """The entities of each text as (type, text, start, end), padding dropped (and checked)."""
    entities = []
    for b, n in enumerate(outputs["num_entities"]):
        fields = [outputs[f"entity_{name}"][b] for name in ("type", "text", "start", "end")]
        assert all(row[n:] == [padding] * (len(row) - n)
                   for row, padding in zip(fields, ["", "", -1, -1], strict=True))  # fmt: skip
        entities.append(list(zip(*(row[:n] for row in fields), strict=True)))
    return entities


def expected_entities(features, logits) -> tuple[list[list[tuple]], list[list[str]]]:
    """As run_ner.predict_tags and conlleval: each word's argmax label at its labelled
    position, the text's tags read as entities by tagging.chunks, each cut out of the text
    from its first word's first character to its last word's last. Also returns the tags."""
    words = [conll_words(text) for text in TEXTS]
    tags = [[None] * len(w) for w in words]
    for feature, window in zip(features, logits, strict=True):
        for position, (text, word) in feature.word_at.items():
            tags[text][word] = LABELS[int(np.argmax(window[position]))]
    entities = []
    for text, text_words, text_tags in zip(TEXTS, words, tags, strict=True):
        assert None not in text_tags
        spans = [
            (t, text_words[first][1], text_words[last][2]) for t, first, last in chunks(text_tags)
        ]
        entities.append([(t, text[start:end], start, end) for t, start, end in spans])
    return entities, tags


def test_graph_windows_equal_features_py(tagged):
    features, inputs = tagged["features"], tagged["recorded"].inputs
    assert len(features) > len(TEXTS) + 5  # long texts have several windows
    for name in ("input_ids", "input_mask", "segment_ids"):
        np.testing.assert_array_equal(inputs[name], [getattr(f, name) for f in features], name)


def test_graph_entities_equal_the_python_tagging(tagged):
    # The model's logits over the windows that equal features.py's (the test above).
    expected, tags = expected_entities(tagged["features"], tagged["recorded"].logits)
    assert served_entities(tagged["outputs"]) == expected
    # The chunk rules that matter were exercised: an I- that starts an entity, after O and
    # after another type, and entities of several words.
    pairs = [(a, b) for t in tags for a, b in zip(["O", *t], t, strict=False)]
    assert any(a == "O" and b.startswith("I-") for a, b in pairs)
    assert any(a != "O" and b.startswith("I-") and a[2:] != b[2:] for a, b in pairs)
    assert any(last > first for t in tags for _, first, last in chunks(t))


def test_a_batch_without_words_has_no_entities(model):
    outputs = EntityTagger(model, VOCAB, True, LABELS, MAX_SEQ_LENGTH, DOC_STRIDE).tag(
        tf.constant(["", " \n"])
    )
    assert outputs["entity_text"].shape == (2, 0)
    assert outputs["num_entities"].numpy().tolist() == [0, 0]


SERVE = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops the tokenizer uses)
model = tf.saved_model.load(sys.argv[1])
out = model.signatures["serving_default"](text=tf.constant(json.loads(sys.argv[2])))
ids = model.signatures["serve"](
    input_ids=tf.constant([[101, 7592, 102]]), input_mask=tf.constant([[1, 1, 1]]),
    segment_ids=tf.constant([[0, 0, 0]]))
print(json.dumps({
    **{k: [[s.decode() for s in row] for row in v.numpy()] if v.dtype == tf.string
       else v.numpy().tolist() for k, v in out.items()},
    "logits": ids["logits"].numpy().shape,
    "imported": sorted({m.split(".")[0] for m in sys.modules if m.startswith("bert_tf")}),
}))
"""


def test_the_saved_model_tags_raw_text_without_bert_tf(tagged, model, tmp_path):
    export_dir = export_ner(
        model,
        str(tmp_path / "export"),
        vocab_file=VOCAB,
        do_lower_case=True,
        labels=LABELS,
        max_seq_length=MAX_SEQ_LENGTH,
        doc_stride=DOC_STRIDE,
    )
    metadata = json.loads((tmp_path / "export" / "assets.extra" / "bert_tf.json").read_text())
    assert metadata == {
        "labels": LABELS,
        "max_seq_length": MAX_SEQ_LENGTH,
        "doc_stride": DOC_STRIDE,
        "do_lower_case": True,
        "dtype": "float32",
    }
    served = served_json(SERVE, export_dir, json.dumps(TEXTS), cwd=tmp_path)
    assert served["imported"] == []
    assert served["logits"] == [1, 3, len(LABELS)]
    entities = served_entities(served)
    expected, _ = expected_entities(tagged["features"], tagged["recorded"].logits)
    assert entities == expected
    for text, text_entities in zip(TEXTS, entities, strict=True):
        assert all(text[start:end] == entity for _, entity, start, end in text_entities)
