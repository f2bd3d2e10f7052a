"""NER on CoNLL-2003 (paper Sec. 5.3): the column files read (IOB1 or IOB2), the first piece
of each word labelled in the window where it has most document context, the token
classifier fine-tuned or on frozen features, and its loss."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from conftest import REPO, SAMPLE_DATA, tiny_config

from bert_tf.config import FEATURES
from bert_tf.errors import InputError
from bert_tf.modeling.token_classifier import BertTokenClassifier
from bert_tf.ner.data import (
    check_tags,
    find_split_file,
    label_list,
    parse_conll_lines,
    read_conll_file,
)
from bert_tf.ner.features import convert_documents_to_features
from bert_tf.ner.objective import TokenClassification
from bert_tf.tokenization import FullTokenizer

CONLL_DIR = REPO.parent / "shared" / "data" / "conll2003"
IOB2_FILE = """\
-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC
call NN I-NP O
. . O O

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER

-DOCSTART- -X- -X- O

BRUSSELS NNP B-NP B-LOC
1996-08-22 CD I-NP O
"""
# The same in IOB1: I- everywhere except where two entities of one type touch.
IOB1_FILE = """\
-DOCSTART- -X- -X- O

EU NNP I-NP I-ORG
rejects VBZ I-VP O
German JJ I-NP I-MISC
call NN I-NP O
. . O O

Peter NNP I-NP I-PER
Blackburn NNP I-NP I-PER
Smith NNP I-NP B-PER

-DOCSTART- -X- -X- O

BRUSSELS NNP I-NP I-LOC
1996-08-22 CD I-NP O
"""


@pytest.fixture(scope="module")
def tokenizer() -> FullTokenizer:
    return FullTokenizer(str(SAMPLE_DATA / "vocab.txt"), do_lower_case=True)


def parse(text: str, source: str = "f.txt"):
    return parse_conll_lines(text.splitlines(keepends=True), source)


# Reading. ------------------------------------------------------------------------------


def test_reads_documents_sentences_words_and_tags():
    conll = parse(IOB2_FILE)
    assert conll.scheme == "IOB2" and conll.num_columns == 4
    assert [len(d.sentences) for d in conll.documents] == [2, 1]
    first = conll.documents[0].sentences[0]
    assert first.words == ["EU", "rejects", "German", "call", "."]
    assert first.tags == ["B-ORG", "O", "B-MISC", "O", "O"]
    assert first.line == 3 and conll.documents[1].sentences[0].line == 14
    assert conll.documents[0].docstart == ["-DOCSTART-", "-X-", "-X-", "O"]
    assert conll.entity_types() == {"ORG", "MISC", "PER", "LOC"}


def test_iob1_is_read_as_iob2_and_written_back_as_iob1():
    conll = parse(IOB1_FILE)
    assert conll.scheme == "IOB1"
    people = conll.documents[0].sentences[1]
    assert people.tags == ["B-PER", "I-PER", "B-PER"]
    assert conll.to_file_scheme(people.tags) == ["I-PER", "I-PER", "B-PER"]
    assert parse(IOB2_FILE).sentences[0].tags == conll.sentences[0].tags


def test_label_list_is_o_then_b_and_i_of_each_type_sorted():
    assert label_list({"PER", "LOC"}) == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("EU NNP B-ORG\nrejects VBZ\n", "f.txt:2: 2 columns; expected 3 as on line 1"),
        ("EU\n", "f.txt:1: 1 column; expected the word and its tag"),
        ("EU NNP B-ORG\nrejects VBZ X-ORG\n", "f.txt:2: "),
        ("EU NNP B-ORG\nrejects VBZ B_ORG\n", "f.txt:2: "),
        ("\n\n-DOCSTART- -X- O\n\n", "f.txt: no sentences"),
    ],
)
def test_malformed_column_files_name_file_and_line(text, message):
    with pytest.raises(InputError, match="^" + message):
        parse(text)


def test_a_dev_tag_outside_the_training_tag_set_names_file_line_and_tag():
    train = parse(IOB2_FILE, "train.txt")
    dev = parse("Paris NNP B-NP B-CITY\n", "valid.txt")
    with pytest.raises(InputError, match=r"^valid.txt:1: tag B-CITY is not in the tag set of"):
        check_tags(dev, label_list(train.entity_types()), "train.txt")
    check_tags(parse("Paris NNP B-NP B-LOC\n"), label_list(train.entity_types()), "train.txt")


def test_split_files_have_the_usual_and_the_original_names(tmp_path):
    (tmp_path / "eng.testa").write_text("x O\n")
    assert find_split_file(str(tmp_path), "dev").endswith("eng.testa")
    with pytest.raises(InputError, match="no test file .expected one of test.txt, eng.testb"):
        find_split_file(str(tmp_path), "test")


# Features. -----------------------------------------------------------------------------


def labelled_words(features, labels):
    """(sentence, word) -> (label, [its piece and the pieces around it]) over all windows."""
    found = {}
    for feature in features:
        for position, key in feature.word_at.items():
            assert key not in found, f"word {key} labelled twice"
            assert feature.label_mask[position] == 1
            found[key] = (labels[feature.label_ids[position]], feature.tokens[position])
    return found


def test_first_piece_of_each_word_is_labelled_and_the_others_are_not(tokenizer):
    conll = parse(IOB2_FILE)
    labels = label_list(conll.entity_types())
    (feature, second) = convert_documents_to_features(conll.documents, labels, tokenizer, 32, 8)
    # One window per document: the whole document's context.
    assert feature.tokens == [
        "[CLS]", "eu", "rejects", "german", "call", ".", "peter", "blackburn", "[SEP]"
    ]  # fmt: skip
    assert [labels[i] for i, m in zip(feature.label_ids, feature.label_mask, strict=True) if m] == [
        "B-ORG", "O", "B-MISC", "O", "O", "B-PER", "I-PER"
    ]  # fmt: skip
    assert second.tokens == ["[CLS]", "brussels", "1996", "-", "08", "-", "22", "[SEP]"]
    assert second.label_mask[:8] == [0, 1, 1, 0, 0, 0, 0, 0]  # only 1996 of 1996-08-22
    assert feature.input_mask == [1] * 9 + [0] * 23 and feature.segment_ids == [0] * 32


def test_long_documents_become_windows_and_every_word_is_predicted_once(tokenizer):
    words = [f"w{i} NN O O\n" if i % 7 else f"Paris{i} NNP B-NP B-LOC\n" for i in range(60)]
    conll = parse("".join(words) + "\n" + "".join(words))
    labels = label_list(conll.entity_types())
    features = list(convert_documents_to_features(conll.documents, labels, tokenizer, 16, 5))
    assert len(features) > 10
    found = labelled_words(features, labels)
    assert sorted(found) == [(s, w) for s in range(2) for w in range(60)]
    assert all(len(f.tokens) <= 16 for f in features)
    # Each word in the window where it has the most context: never at a window's edge
    # unless the document starts or ends there.
    for feature in features[1:-1]:
        assert 1 not in feature.word_at and len(feature.tokens) - 2 not in feature.word_at


def test_sentence_context_windows_each_sentence_alone(tokenizer):
    conll = parse(IOB2_FILE)
    labels = label_list(conll.entity_types())
    features = list(
        convert_documents_to_features(
            conll.documents, labels, tokenizer, 32, 8, document_context=False
        )
    )
    assert [f.tokens[1] for f in features] == ["eu", "peter", "brussels"]


def test_a_word_without_pieces_is_predicted_at_an_unk(tokenizer):
    conll = parse("EU NNP B-ORG\n\u200b NN O\nsays VBZ O\n")
    labels = label_list(conll.entity_types())
    (feature,) = convert_documents_to_features(conll.documents, labels, tokenizer, 16, 8)
    assert feature.tokens == ["[CLS]", "eu", "[UNK]", "says", "[SEP]"]
    assert len(feature.word_at) == 3


@pytest.mark.skipif(not CONLL_DIR.is_dir(), reason="../shared/data/conll2003 is absent")
def test_real_conll2003_dev_every_word_labelled_once_at_its_first_piece(tokenizer):
    conll = read_conll_file(str(CONLL_DIR / "valid.txt"))
    assert conll.scheme == "IOB2" and len(conll.documents) == 216
    labels = label_list(conll.entity_types())
    features = list(convert_documents_to_features(conll.documents, labels, tokenizer, 128, 64))
    found = labelled_words(features, labels)
    sentences = conll.sentences
    assert len(found) == sum(len(s.words) for s in sentences) == 51362
    for (s, w), (label, piece) in found.items():
        assert label == sentences[s].tags[w]
        assert piece == (tokenizer.tokenize(sentences[s].words[w]) or ["[UNK]"])[0]


# The model and its loss. ---------------------------------------------------------------


def inputs(batch: int = 2, length: int = 7) -> dict:
    ids = np.tile(np.array([[101, 2023, 2003, 1037, 3231, 102, 0]], "int32"), (batch, 1))
    return {"input_ids": ids, "input_mask": (ids > 0).astype("int32"), "segment_ids": 0 * ids}


def test_fine_tuning_logits_are_the_classifier_on_every_position():
    model = BertTokenClassifier(tiny_config(), num_labels=9)
    outputs = model(inputs(), training=False)
    head = model.head
    expected = np.asarray(outputs["sequence_output"]) @ np.asarray(
        head.output_weights
    ).T + np.asarray(head.output_bias)
    np.testing.assert_allclose(outputs["logits"], expected, atol=1e-5)
    # The checkpoint names: the encoder's, and the head's as the classifier's.
    names = model.original_variable_names()
    encoder_names = model.encoder.original_variable_names()
    assert set(names) - set(encoder_names) == {"output_weights", "output_bias"}
    assert names["output_weights"] is head.output_weights
    assert names["output_bias"] is head.output_bias
    for name, variable in encoder_names.items():
        assert names[name] is variable, name


@pytest.mark.parametrize("feature", FEATURES)
def test_feature_based_trains_only_the_bilstm_and_classifier_on_frozen_bert(feature):
    config = tiny_config()
    config.num_hidden_layers = 4
    model = BertTokenClassifier(config, num_labels=5, feature_based=feature, lstm_units=8)
    x = inputs()
    first = model(x, training=True)
    second = model(x, training=True)
    # Frozen BERT runs without dropout even in training.
    np.testing.assert_array_equal(first["sequence_output"], second["sequence_output"])
    trainable = TokenClassification(5, feature, 8).trainable_variables(model)
    encoder = {id(v) for v in model.encoder.variables}
    assert trainable and not any(id(v) in encoder for v in trainable)
    mixed = 1 if feature.startswith("weighted_sum") else 0
    assert len(trainable) == 2 * 2 * 3 + 2 + 2 * mixed  # 2 BiLSTMs, classifier, mix
    assert first["logits"].shape == (2, 7, 5)


def test_feature_based_inputs_are_the_named_activations():
    config = tiny_config()
    config.num_hidden_layers = 5
    model = BertTokenClassifier(config, 3, feature_based="concat_last_four_hidden")
    assert model.get_layer("bilstm_0").input[0].shape[-1] == 4 * 32  # 4 layers of H = 32
    config.num_hidden_layers = 3
    with pytest.raises(InputError, match="needs at least 4 layers; the model has 3"):
        BertTokenClassifier(config, 3, feature_based="weighted_sum_last_four_hidden")


def test_loss_is_the_mean_cross_entropy_over_labelled_words_only():
    objective = TokenClassification(3)
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 5, 3)).astype("float32")
    labels = rng.integers(0, 3, size=(2, 5)).astype("int32")
    mask = np.array([[0, 1, 1, 0, 1], [0, 1, 0, 0, 0]], "int32")
    features = {"label_ids": labels, "label_mask": mask}
    sums = objective.sums({"logits": logits}, features)
    counts = objective.counts(features)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(log_probs, labels[..., None], -1)[..., 0]
    assert float(counts["words"]) == 4
    np.testing.assert_allclose(objective.loss(sums, counts), nll[mask == 1].mean(), rtol=1e-5)
    accuracy = (logits.argmax(-1) == labels)[mask == 1].mean()
    np.testing.assert_allclose(objective.metrics(sums, counts)["accuracy"], accuracy)


def test_the_pooler_is_not_trained():
    model = BertTokenClassifier(tiny_config(), 3)
    trainable = {id(v) for v in TokenClassification(3).trainable_variables(model)}
    assert not any(id(v) in trainable for v in model.encoder.pooler.variables)
    assert id(model.head.output_weights) in trainable


def test_tensorflow_datasets_conll2003_reads_as_the_column_file(tmp_path):
    tf = pytest.importorskip("tensorflow")
    tfds = pytest.importorskip("tensorflow_datasets")
    from bert_tf.ner.data import tfds_conll2003

    def as_dataset(builder, split, **kwargs):
        names = builder.info.features["ner"].feature.names
        rows = [
            (["EU", "rejects", "German"], ["B-ORG", "O", "B-MISC"]),
            (["Peter", "Blackburn"], ["B-PER", "I-PER"]),
        ]
        rows = [
            {"id": str(i), "tokens": words, "pos": [0] * len(words), "chunks": [0] * len(words),
             "ner": [names.index(tag) for tag in tags]}
            for i, (words, tags) in enumerate(rows)
        ]  # fmt: skip
        spec = {name: tf.TensorSpec([None], tf.int64) for name in ("pos", "chunks", "ner")}
        spec["id"], spec["tokens"] = tf.TensorSpec([], tf.string), tf.TensorSpec([None], tf.string)
        return tf.data.Dataset.from_generator(lambda: iter(rows), output_signature=spec)

    with tfds.testing.mock_data(as_dataset_fn=as_dataset):
        conll = tfds_conll2003("dev", str(tmp_path))
    assert conll.source == "conll2003[dev]" and conll.scheme == "IOB2"
    assert [s.words for s in conll.sentences] == [
        ["EU", "rejects", "German"],
        ["Peter", "Blackburn"],
    ]
    assert conll.sentences[1].tags == ["B-PER", "I-PER"]
    with pytest.raises(InputError, match=r"^--use_tfds: conll2003 \(split dev\) is not prepared"):
        tfds_conll2003("dev", str(tmp_path))


def test_a_stride_longer_than_the_window_says_the_windows_will_not_overlap(caplog):
    from bert_tf.ner.options import NerOptions

    options = NerOptions(
        bert_config_file="c", vocab_file="v", output_dir="o", do_train=True, data_dir="d",
        max_seq_length=32, doc_stride=64,
    )  # fmt: skip
    with caplog.at_level(logging.WARNING):
        options.check()
    (message,) = [r.getMessage() for r in caplog.records]
    assert message.startswith("--doc_stride=64 is longer than a window's 30 pieces ")
