"""bert_tf as a Keras library: models loaded in one line from a model directory
(`from_pretrained`), `BertPreprocessor` (raw text -> the models' inputs, in the graph), and
standard Keras on both: compile, fit, callbacks, predict on strings, `.keras` files."""

from __future__ import annotations

import logging
import re
import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf
from conftest import REPO, UNCASED_VOCAB, tiny_config_dict

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.model_io.checkpoints import save_original_checkpoint
from bert_tf.model_io.convert import convert_checkpoint
from bert_tf.model_io.loading import load_checkpoint
from bert_tf.model_io.saving import save_model_directory
from bert_tf.model_io.source import ModelSource
from bert_tf.modeling import (
    BertClassifier,
    BertEncoder,
    BertMultipleChoice,
    BertPretrainer,
    ConfigModel,
)
from bert_tf.modeling.span_labeler import BertSpanLabeler
from bert_tf.modeling.task_model import BertTaskModel
from bert_tf.modeling.token_classifier import BertTokenClassifier
from bert_tf.preprocessing import BertPreprocessor
from bert_tf.text.packing import pack_tokens, pad_inputs
from bert_tf.tokenization import FullTokenizer

# The tiny model's vocab: enough words for sentiment-like sentences.
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "##s", "##ed", "##ing"] + (
    "the a an this it was is and but i movie film plot story acting ending actors "
    "good great fine wonderful delightful moving best loved "
    "bad awful poor tedious boring mess worst hated"
).split()
POSITIVE = ["a great film", "the acting was wonderful", "i loved this movie", "a moving story"]
NEGATIVE = ["an awful film", "the plot was boring", "i hated this movie", "a tedious mess"]

# Every model class, with its head arguments.
MODELS = [
    (BertEncoder, {}),
    (BertPretrainer, {}),
    (BertClassifier, {"num_labels": 3}),
    (BertTokenClassifier, {"num_labels": 5}),
    (BertSpanLabeler, {}),
    (BertMultipleChoice, {"num_choices": 2}),
]
MODEL_IDS = [model_class.__name__ for model_class, _ in MODELS]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A tiny model laid out as Google's released ones: bert_config.json, bert_model.ckpt
    (a random pre-trained model: encoder and pre-training heads), vocab.txt."""
    directory = tmp_path_factory.mktemp("tiny_uncased")
    (directory / "vocab.txt").write_text("".join(token + "\n" for token in VOCAB))
    config = BertConfig(**tiny_config_dict(vocab_size=len(VOCAB), max_position_embeddings=128))
    config.to_json_file(directory / "bert_config.json")
    keras.utils.set_random_seed(0)
    save_original_checkpoint(BertPretrainer(config), str(directory / "bert_model.ckpt"))
    return directory


def loaded_weights(model: keras.Model) -> list:
    """The weights a pre-training checkpoint gives `model`: all but a task head."""
    return model.encoder.weights if isinstance(model, BertTaskModel) else model.weights


def assert_same_weights(got: list, expected: list) -> None:
    assert [w.path for w in got] == [w.path for w in expected]
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=a.path)


# from_pretrained ----------------------------------------------------------------------------


@pytest.mark.parametrize("model_class, head_args", MODELS, ids=MODEL_IDS)
def test_from_pretrained_loads_what_load_checkpoint_loads(model_dir, model_class, head_args):
    model = model_class.from_pretrained(model_dir, **head_args)

    expected = model_class(BertConfig.from_json_file(model_dir / "bert_config.json"), **head_args)
    load_checkpoint(expected, model_dir)
    assert model.config == expected.config
    assert_same_weights(loaded_weights(model), loaded_weights(expected))


def test_a_head_the_checkpoint_lacks_is_newly_initialized_and_logged(model_dir, caplog):
    with caplog.at_level(logging.WARNING, logger="bert_tf.model_io"):
        BertPretrainer.from_pretrained(model_dir)
    assert not caplog.records  # the pre-training heads are in the checkpoint

    with caplog.at_level(logging.WARNING, logger="bert_tf.model_io"):
        BertClassifier.from_pretrained(model_dir, num_labels=2)
    (record,) = caplog.records
    assert "BertClassifier" in record.message and "(classifier), newly initialized" in (
        record.message
    )


@pytest.fixture(scope="module")
def fine_tuned_dir(model_dir, tmp_path_factory):
    """A bert_tf fine-tuning output_dir: bert_config.json and `ckpt-7` of a classifier with
    3 labels, saved as `bert_tf.training.loop.Trainer` saves (the whole model, its optimizer, and
    its encoder under its own name); returns (the directory, the model)."""
    output_dir = tmp_path_factory.mktemp("mnli")
    model = BertClassifier.from_pretrained(model_dir, num_labels=3)
    model.head.output_bias.assign([1.0, 2.0, 3.0])
    optimizer = keras.optimizers.Adam()
    optimizer.build(model.trainable_variables)  # it tracks the variables too
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, encoder=model.encoder)
    tf.train.CheckpointManager(checkpoint, str(output_dir), 2, checkpoint_name="ckpt").save(7)
    model.config.to_json_file(output_dir / "bert_config.json")
    return output_dir, model


def test_a_fine_tuned_head_loads_from_a_training_output_dir(fine_tuned_dir):
    output_dir, fine_tuned = fine_tuned_dir
    model = BertClassifier.from_pretrained(output_dir, num_labels=3)
    assert_same_weights(model.weights, fine_tuned.weights)


def test_a_fine_tuning_output_dir_gives_its_head_arguments(model_dir, fine_tuned_dir, tmp_path):
    output_dir, fine_tuned = fine_tuned_dir
    described = tmp_path / "mnli"
    shutil.copytree(output_dir, described)  # + what run_task writes beside the checkpoints:
    save_model_directory(
        str(described), fine_tuned, str(model_dir / "vocab.txt"), True, weights=False
    )
    model = BertClassifier.from_pretrained(described)  # num_labels=3 from task_model.json
    assert_same_weights(model.weights, fine_tuned.weights)


def test_another_tasks_head_is_not_taken_for_this_ones(fine_tuned_dir, caplog):
    output_dir, fine_tuned = fine_tuned_dir
    with caplog.at_level(logging.WARNING, logger="bert_tf.model_io"):
        model = BertSpanLabeler.from_pretrained(output_dir)  # its head is "squad", 2 outputs
    assert "(squad), newly initialized" in caplog.text
    assert_same_weights(model.encoder.weights, fine_tuned.encoder.weights)


def test_a_head_fine_tuned_with_other_labels_is_an_error(fine_tuned_dir):
    output_dir, _ = fine_tuned_dir
    with pytest.raises(
        InputError, match=r"classifier/output_weights has shape \[3, 32\].*needs \[2, 32\]"
    ):
        BertClassifier.from_pretrained(output_dir, num_labels=2)


def test_a_hugging_face_config_json_gives_the_config(tmp_path):
    values = tiny_config_dict()
    hf_only = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "pad_token_id": 0}
    (tmp_path / "config.json").write_text(BertConfig(**values, **hf_only).to_json_string())
    # The network's keys, as bert_tf.model_io.hf_format maps them; the library's are dropped.
    assert ModelSource(tmp_path).config.to_dict() == values

    (tmp_path / "config.json").write_text(BertConfig(**values, model_type="gpt2").to_json_string())
    with pytest.raises(InputError, match="model_type='gpt2', expected 'bert'"):
        _ = ModelSource(tmp_path).config


@pytest.mark.parametrize("model_class, head_args", MODELS, ids=MODEL_IDS)
def test_from_pretrained_loads_a_hugging_face_directory_as_the_original(
    model_dir, tmp_path, model_class, head_args
):
    hf_dir = tmp_path / "hf"
    convert_checkpoint(
        str(model_dir), str(hf_dir), ConfigModel, do_lower_case=True
    )  # config.json, model.safetensors
    model = model_class.from_pretrained(hf_dir, **head_args)

    expected = model_class.from_pretrained(model_dir, **head_args)
    assert model.config.to_dict() == expected.config.to_dict()
    assert_same_weights(loaded_weights(model), loaded_weights(expected))


def test_a_directory_without_a_config_is_an_error_naming_it(tmp_path):
    with pytest.raises(InputError, match=f"{tmp_path}: no bert_config.json or config.json"):
        BertEncoder.from_pretrained(tmp_path)


# BertPreprocessor ---------------------------------------------------------------------------

TEXTS = [
    "Hello, World!",
    "UNwant\u00e9d,running",
    "\u4e2d\u6587 mixed with English",
    "",
    "a sentence long enough to be truncated at twelve tokens, surely",
]
PAIRS = [
    ("Is this a question?", "Yes it is."),
    ("a first text far longer than the second one is", "short"),
    ("alone", ""),
]


def full_tokenizer_inputs(pairs, seq_length: int, do_lower_case: bool = True) -> dict:
    """input_ids, input_mask, segment_ids of (text_a, text_b or None) pairs as the original:
    FullTokenizer, then run_classifier's packing."""
    tokenizer = FullTokenizer(UNCASED_VOCAB, do_lower_case=do_lower_case)
    rows = []
    for text_a, text_b in pairs:
        tokens_b = tokenizer.tokenize(text_b) if text_b is not None else None
        tokens, segments = pack_tokens(tokenizer.tokenize(text_a), tokens_b, seq_length)
        rows.append(pad_inputs(tokenizer.convert_tokens_to_ids(tokens), segments, seq_length))
    ids, mask, segments = (np.array(column) for column in zip(*rows, strict=True))
    return {"input_ids": ids, "input_mask": mask, "segment_ids": segments}


def assert_same_inputs(got: dict, expected: dict) -> None:
    assert set(got) == set(expected)
    for name in expected:
        np.testing.assert_array_equal(np.asarray(got[name]), expected[name], err_msg=name)
        assert got[name].dtype == tf.int32


def test_the_preprocessor_gives_full_tokenizers_ids_mask_and_segments():
    preprocessor = BertPreprocessor(UNCASED_VOCAB, max_seq_length=12)
    expected = full_tokenizer_inputs([(text, None) for text in TEXTS], 12)
    assert_same_inputs(preprocessor(TEXTS), expected)


def test_the_preprocessor_packs_pairs_of_texts_as_run_classifier():
    preprocessor = BertPreprocessor(UNCASED_VOCAB, max_seq_length=12)
    texts_a, texts_b = (list(column) for column in zip(*PAIRS, strict=True))
    assert_same_inputs(preprocessor((texts_a, texts_b)), full_tokenizer_inputs(PAIRS, 12))


def test_the_preprocessor_runs_in_a_tf_data_pipeline():
    preprocessor = BertPreprocessor(UNCASED_VOCAB, max_seq_length=12, do_lower_case=False)
    dataset = tf.data.Dataset.from_tensor_slices(TEXTS).batch(2).map(preprocessor)
    batches = list(dataset)
    got = {name: np.concatenate([batch[name] for batch in batches]) for name in batches[0]}
    expected = full_tokenizer_inputs([(text, None) for text in TEXTS], 12, do_lower_case=False)
    assert_same_inputs(got, expected)


def test_the_casing_of_a_model_directory(tmp_path):
    for name in ("cased_L-12_H-768_A-12", "uncased_L-12_H-768_A-12"):
        (tmp_path / name).mkdir()
    assert ModelSource(tmp_path / "cased_L-12_H-768_A-12").do_lower_case() is False
    assert ModelSource(tmp_path / "uncased_L-12_H-768_A-12").do_lower_case() is True
    (tmp_path / "tokenizer_config.json").write_text('{"do_lower_case": false}')
    assert ModelSource(tmp_path).do_lower_case() is False  # Hugging Face's tokenizer_config.json
    (tmp_path / "tokenizer_config.json").unlink()
    assert (
        ModelSource(tmp_path).do_lower_case() is True
    )  # unknown: uncased, as most released models


# Standard Keras on them ---------------------------------------------------------------------


def text_classifier(model_dir) -> keras.Model:
    """Raw strings -> a BertClassifier's logits, all in one Keras model."""
    preprocessor = BertPreprocessor.from_pretrained(model_dir, max_seq_length=16)
    classifier = BertClassifier.from_pretrained(model_dir, num_labels=2)
    text = keras.Input(shape=(), dtype="string", name="text")
    return keras.Model(text, classifier(preprocessor(text))["logits"])


def fine_tune(model: keras.Model, epochs: int, callbacks: list) -> dict:
    """`model` (raw strings -> logits) fitted on POSITIVE and NEGATIVE; the losses by epoch."""
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    texts, labels = POSITIVE + NEGATIVE, [1] * len(POSITIVE) + [0] * len(NEGATIVE)
    data = tf.data.Dataset.from_tensor_slices((texts, labels)).shuffle(8, seed=0).batch(4)
    return model.fit(data, epochs=epochs, callbacks=callbacks, verbose=0).history


def test_fit_on_raw_strings_lowers_the_loss_and_the_keras_file_keeps_the_model(model_dir, tmp_path):
    keras.utils.set_random_seed(1)
    model = text_classifier(model_dir)
    callbacks = [
        # Every 10 steps (5 epochs): the last save is the trained model.
        keras.callbacks.ModelCheckpoint(tmp_path / "saved.keras", save_freq=10),
        keras.callbacks.EarlyStopping(monitor="loss", patience=10),
    ]
    losses = fine_tune(model, 20, callbacks)["loss"]
    assert losses[-1] < 0.5 * losses[0], losses

    texts = tf.constant(POSITIVE + NEGATIVE)
    logits = model(texts, training=False).numpy()  # [8, 2] (the docs' example runs predict)
    assert (logits.argmax(-1) == [1, 1, 1, 1, 0, 0, 0, 0]).mean() > 0.5
    keras.saving.save_model(model, tmp_path / "classifier.keras")
    loaded = keras.saving.load_model(tmp_path / "classifier.keras")  # no custom_objects
    np.testing.assert_allclose(loaded(texts, training=False), logits, atol=1e-5)
    saved = keras.saving.load_model(tmp_path / "saved.keras")
    np.testing.assert_allclose(saved(texts, training=False), logits, atol=1e-5)


def test_the_tensorboard_callback_writes_the_training_scalars(model_dir, tmp_path):
    pytest.importorskip("tensorboard")  # what Keras's TensorBoard callback writes with
    fine_tune(text_classifier(model_dir), 1, [keras.callbacks.TensorBoard(tmp_path / "logs")])
    assert list((tmp_path / "logs" / "train").glob("events.out.tfevents.*"))


@pytest.mark.parametrize("model_class, head_args", MODELS, ids=MODEL_IDS)
def test_every_model_class_round_trips_through_a_keras_file(
    model_dir, tmp_path, model_class, head_args
):
    model = model_class.from_pretrained(model_dir, **head_args)
    keras.saving.save_model(model, tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    assert type(loaded) is model_class and loaded.config == model.config
    assert_same_weights(loaded.weights, model.weights)


# docs/python_api.md -------------------------------------------------------------------------

# The released model the examples name; the tests run them on the tiny model instead.
DOC_MODEL = "uncased_L-12_H-768_A-12"


def test_the_python_api_examples_run(model_dir, tmp_path, monkeypatch):
    doc = (REPO / "docs" / "python_api.md").read_text()
    examples = re.findall(r"```python\n(.*?)```", doc, re.DOTALL)
    assert len(examples) >= 2 and all(DOC_MODEL in example for example in examples)
    monkeypatch.chdir(tmp_path)
    for example in examples:
        exec(example.replace(f'"{DOC_MODEL}"', repr(str(model_dir))), {})


def test_every_model_of_the_python_api_imports_from_bert_tf_modeling():
    import bert_tf.modeling

    doc = (REPO / "docs" / "python_api.md").read_text()
    documented = set(re.findall(r"^\| `(Bert\w+)` \|", doc, re.MULTILINE))
    assert len(documented) == 6
    assert documented <= set(bert_tf.modeling.__all__)
