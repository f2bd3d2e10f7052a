"""bert_tf/serving/export.py: an export replaces a new or empty folder or an earlier export of ours,
and refuses every other folder before any work, so that nothing a user keeps there is deleted;
the `serve` signature that every task's SavedModel shares refuses a bad request with a message
naming the input and its limit. (The raw-text signatures are tested with each task:
test_run_classifier.py, test_squad_serving.py, test_ner_serving.py, test_run_swag.py.)"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from conftest import SAMPLE_DATA, tiny_config

from bert_tf.classification.serving import export_classifier
from bert_tf.errors import InputError
from bert_tf.io.fileio import umask
from bert_tf.modeling import BertClassifier, BertMultipleChoice
from bert_tf.modeling.span_labeler import BertSpanLabeler
from bert_tf.modeling.token_classifier import BertTokenClassifier
from bert_tf.ner.serving import export_ner
from bert_tf.serving.export import METADATA_FILE, check_export_dir, check_text_pairs
from bert_tf.serving.warmup import WARMUP_FILE
from bert_tf.squad.serving import export_squad
from bert_tf.swag.serving import ENDINGS, export_swag


def earlier_export(folder: Path) -> Path:
    (folder / METADATA_FILE).parent.mkdir(parents=True)
    (folder / METADATA_FILE).write_text("{}")
    (folder / "saved_model.pb").write_bytes(b"")
    return folder


def test_a_new_or_empty_folder_or_an_earlier_export_may_be_replaced(tmp_path: Path):
    check_export_dir(str(tmp_path / "new" / "export"))
    (tmp_path / "empty").mkdir()
    check_export_dir(str(tmp_path / "empty"))
    check_export_dir(str(earlier_export(tmp_path / "export")), str(tmp_path / "out"))
    check_export_dir(str(tmp_path / "out" / "export"), str(tmp_path / "out"))  # inside: its own


@pytest.mark.parametrize(
    "layout, message",
    [
        ("user files", "holds notes.txt, photos, not a SavedModel exported here; expected a new "
                       "or empty folder, or an earlier export (which is replaced)"),
        ("a SavedModel of someone else", "holds saved_model.pb, variables, not a SavedModel"),
        ("the output_dir", "holds --output_dir="),
        ("the output_dir's parent", "holds --output_dir="),
        ("a file", "is a file; expected a folder"),
    ],
)  # fmt: skip
def test_any_other_folder_is_refused_naming_what_it_holds(layout, message, tmp_path: Path):
    folder = tmp_path / "target"
    output_dir = tmp_path / "out"
    if layout == "user files":
        (folder / "photos").mkdir(parents=True)
        (folder / "notes.txt").write_text("mine")
    elif layout == "a SavedModel of someone else":
        (folder / "variables").mkdir(parents=True)
        (folder / "saved_model.pb").write_bytes(b"")
    elif layout == "the output_dir":
        folder = output_dir
    elif layout == "the output_dir's parent":
        folder = tmp_path
    else:
        folder.write_text("a file")
    with pytest.raises(InputError) as error:
        check_export_dir(str(folder), str(output_dir))
    assert str(error.value).startswith(f"--export_dir={folder}: ")
    assert message in str(error.value)


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> dict:
    """A tiny classifier's and multiple-choice model's SavedModels (max_position_embeddings 64,
    vocab 30522), loaded: the `serve` signature of every task is the same code."""
    folder = tmp_path_factory.mktemp("exports")
    config = tiny_config()
    vocab = str(SAMPLE_DATA / "vocab.txt")
    export_classifier(BertClassifier(config, 2), str(folder / "cls"), vocab, True, 32, ["0", "1"])
    export_swag(BertMultipleChoice(config), str(folder / "swag"), vocab, True, 32)
    export_squad(
        BertSpanLabeler(config), str(folder / "squad"), vocab_file=vocab, do_lower_case=True,
        max_seq_length=32, doc_stride=8, max_query_length=8, n_best_size=5,
        max_answer_length=10, version_2_with_negative=False, null_score_diff_threshold=0.0,
    )  # fmt: skip
    labels = ["O", "B-PER", "I-PER"]
    export_ner(
        BertTokenClassifier(config, len(labels)), str(folder / "ner"), vocab_file=vocab,
        do_lower_case=True, labels=labels, max_seq_length=32, doc_stride=8,
    )  # fmt: skip
    loaded = {name: tf.saved_model.load(str(folder / name)) for name in MODELS}
    return {**loaded, "folder": folder}


# Every task's SavedModel: the `serve` signature of each is checked.
MODELS = ("cls", "swag", "squad", "ner")


def request(shape: tuple, **changes) -> dict:
    features = {
        "input_ids": np.full(shape, 1000, np.int32),
        "input_mask": np.ones(shape, np.int32),
        "segment_ids": np.zeros(shape, np.int32),
    }
    for name, change in changes.items():
        features[name] = change(features[name])
    return {name: tf.constant(value) for name, value in features.items()}


def set_last(value: int):
    def change(array):
        array = array.copy()
        array[(0,) * array.ndim] = value
        return array

    return change


BAD_REQUESTS = {
    "an id beyond the vocab": (
        dict(input_ids=set_last(30522)),
        "serve: input_ids out of range; expected values in [0, vocab_size=30522)",
    ),
    "a negative id": (
        dict(input_ids=set_last(-1)),
        "serve: input_ids out of range; expected values in [0, vocab_size=30522)",
    ),
    "a segment id of 2": (
        dict(segment_ids=set_last(2)),
        "serve: segment_ids out of range; expected values in [0, type_vocab_size=2)",
    ),
    "a mask of 5": (
        dict(input_mask=set_last(5)),
        "serve: input_mask out of range; expected values in [0, 2)",
    ),
    "a shorter mask": (
        dict(input_mask=lambda a: a[..., :-1]),
        "serve: input_mask and input_ids differ in shape",
    ),
    "a batch of another size": (
        dict(segment_ids=lambda a: a[:1]),
        "serve: segment_ids and input_ids differ in shape",
    ),
}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("bad", list(BAD_REQUESTS))
def test_a_bad_ids_request_is_refused_naming_the_input_and_its_limit(bad, model, exports):
    serve = exports[model].signatures["serve"]
    shape = (2, 4, 30) if model == "swag" else (2, 30)
    assert serve(**request(shape))  # a good one is answered
    changes, message = BAD_REQUESTS[bad]
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(message)):
        serve(**request(shape, **changes))


@pytest.mark.parametrize("model", MODELS)
def test_a_request_of_more_tokens_than_positions_is_refused(model, exports):
    serve = exports[model].signatures["serve"]
    shape = (2, 4, 65) if model == "swag" else (2, 65)
    with pytest.raises(tf.errors.InvalidArgumentError) as error:
        serve(**request(shape))
    assert "serve: more tokens than max_position_embeddings=64" in str(error.value)


def warmup_requests(path: Path) -> list:
    """The PredictRequests of an export's warm-up file, read with TF Serving's own protos."""
    from tensorflow_serving.apis import prediction_log_pb2

    logs = [prediction_log_pb2.PredictionLog.FromString(record)
            for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator()]  # fmt: skip
    assert all(log.WhichOneof("log_type") == "predict_log" for log in logs)
    return [log.predict_log.request for log in logs]


@pytest.mark.parametrize("model", MODELS)
def test_every_export_warms_tf_serving_up_with_requests_of_each_signature(model, exports):
    # TF Serving reads assets.extra/tf_serving_warmup_requests as PredictionLog records and
    # replays each request through its signature before the model takes traffic: read here
    # with TF Serving's own protos, and each request answered by the export.
    requests = warmup_requests(exports["folder"] / model / WARMUP_FILE)
    signatures = [request.model_spec.signature_name for request in requests]
    assert signatures == ["serving_default"] * 3 + ["serve"] * 3
    lengths = []
    for request in requests:
        inputs = {name: tf.make_ndarray(value) for name, value in request.inputs.items()}
        answer = exports[model].signatures[request.model_spec.signature_name](**inputs)
        assert answer and all(np.all(np.isfinite(v)) for v in answer.values()
                              if v.dtype.is_floating)  # fmt: skip
        if request.model_spec.signature_name == "serve":
            lengths.append(inputs["input_ids"].shape[-1])
    # A short, a middle and the longest sequence of the export (max_seq_length 32).
    assert lengths == [4, 16, 32]


@pytest.mark.parametrize("model", MODELS)
def test_every_export_answers_in_a_tf1_session_as_tf_serving_runs_it(model, exports):
    # TF Serving loads an export into a TF1 Session (its init op run once, with the assets
    # fed), then runs a signature's tensors at every request: each warm-up request, twice,
    # answers as the TF2 signature does. (An anonymous vocab table answered "Table not
    # initialized" here: the Session made it anew at every run.)
    folder = exports["folder"] / model
    requests = []
    for request in warmup_requests(folder / WARMUP_FILE):
        name = request.model_spec.signature_name
        inputs = {key: tf.make_ndarray(value) for key, value in request.inputs.items()}
        expected = {k: v.numpy() for k, v in exports[model].signatures[name](**inputs).items()}
        requests.append((name, inputs, expected))
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        meta_graph = tf.compat.v1.saved_model.load(session, ["serve"], str(folder))
        for name, inputs, expected in requests:
            signature = meta_graph.signature_def[name]
            feed = {signature.inputs[key].name: value for key, value in inputs.items()}
            fetch = {key: signature.outputs[key].name for key in expected}
            for answer in (session.run(fetch, feed), session.run(fetch, feed)):
                for key, value in expected.items():
                    if value.dtype.kind == "f":
                        np.testing.assert_allclose(answer[key], value, atol=1e-5, err_msg=key)
                    else:
                        np.testing.assert_array_equal(answer[key], value, err_msg=key)


def test_an_export_loaded_twice_in_one_process_answers_from_both(exports):
    # Its vocab tables are named: the second load finds the first's table by that name.
    again = tf.saved_model.load(str(exports["folder"] / "cls"))
    texts = {"text_a": tf.constant(["the dog ran home"]), "text_b": tf.constant(["a dog"])}
    first = exports["cls"].signatures["serving_default"](**texts)["probabilities"]
    second = again.signatures["serving_default"](**texts)["probabilities"]
    np.testing.assert_allclose(second, first, atol=1e-6)


@pytest.mark.parametrize(
    "model, build",
    [("cls", lambda c: BertClassifier(c, 2)), ("swag", BertMultipleChoice),
     ("squad", BertSpanLabeler), ("ner", lambda c: BertTokenClassifier(c, 3))],
)  # fmt: skip
def test_an_export_stores_each_weight_once(model, build, exports):
    # Keras's ExportArchive, given the model to track, saved each weight twice (its Keras
    # variable and the TF variable under it): 836 MB for BERT-Base's 420 MB.
    reader = tf.train.load_checkpoint(str(exports["folder"] / model / "variables" / "variables"))
    saved = [name for name in reader.get_variable_to_shape_map() if "VARIABLE_VALUE" in name]
    assert len(saved) == len(build(tiny_config()).weights)


def test_the_raw_text_signatures_truncate_long_text_as_training_does(exports):
    long_text = tf.constant([" ".join(["word"] * 1000), "short"])
    out = exports["cls"].signatures["serving_default"](text_a=long_text, text_b=long_text)
    assert out["probabilities"].shape == (2, 2)
    endings = {f"ending{i}": long_text for i in range(4)}
    out = exports["swag"].signatures["serving_default"](sent1=long_text, sent2=long_text, **endings)
    assert out["probabilities"].shape == (2, 4)


def test_text_a_and_text_b_of_different_lengths_are_refused_naming_both_and_their_lengths(
    exports,
):
    serve_text = exports["cls"].signatures["serving_default"]
    with pytest.raises(tf.errors.InvalidArgumentError) as error:
        serve_text(text_a=tf.constant(["a", "b", "c"]), text_b=tf.constant(["x", "y"]))
    assert (
        "serving_default: text_a has 3 strings and text_b 2; expected one text_b per text_a "
        "(an empty text_b packs its text_a alone)"
    ) in str(error.value)
    # The pairs the message asks for are answered: an empty text_b where there is none.
    out = serve_text(text_a=tf.constant(["a", "b", "c"]), text_b=tf.constant(["x", "y", ""]))
    assert out["probabilities"].shape == (3, 2)


@pytest.mark.parametrize("short", ["sent2", *ENDINGS])
def test_swag_columns_of_different_lengths_are_refused_naming_them(exports, short):
    serve_text = exports["swag"].signatures["serving_default"]
    columns = {name: tf.constant(["a", "b"]) for name in ("sent1", "sent2", *ENDINGS)}
    columns[short] = tf.constant(["a"])
    with pytest.raises(tf.errors.InvalidArgumentError) as error:
        serve_text(**columns)
    assert (
        f"serving_default: sent1 has 2 strings and {short} 1; expected one {short} per sent1 (one "
        "row of SWAG each)"
    ) in str(error.value)


def test_the_texts_a_pair_check_returns_are_read_only_after_the_check():
    # A graph runs its ops in no fixed order: an op fed the unchecked inputs could fail first
    # with TensorFlow's own error, which names no input (it did, on another machine's CI).
    @tf.function
    def join(a, b):
        a, b = check_text_pairs({"a": a, "b": b}, "a hint")
        return tf.strings.join([a, b])

    graph = join.get_concrete_function(
        tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.string)
    ).graph
    for tensor in graph.get_operation_by_name("StringJoin").inputs:
        assert [op.type for op in tensor.op.control_inputs] == ["Assert"]
    for _ in range(20):
        with pytest.raises(tf.errors.InvalidArgumentError, match="a has 2 strings and b 1"):
            join(tf.constant(["x", "y"]), tf.constant(["z"]))


def test_an_export_has_the_permissions_of_the_users_umask(exports):
    mask = umask()
    export = exports["folder"] / "cls"
    assert stat.S_IMODE(os.stat(export).st_mode) == 0o777 & ~mask
    for path in export.rglob("*"):
        expected = 0o777 if path.is_dir() else 0o666
        assert stat.S_IMODE(os.stat(path).st_mode) == expected & ~mask, path


def test_replacing_an_export_keeps_the_old_one_until_the_new_one_is_in_place(
    tmp_path: Path, monkeypatch
):
    import os

    from bert_tf.serving import export as serving

    export = earlier_export(tmp_path / "export")
    real_replace = os.replace

    def failing_move_into_place(source, target):
        if os.fspath(target) == str(export) and ".tmp-" in os.fspath(source):
            raise OSError(5, "Input/output error")  # the new one fails to move in
        return real_replace(source, target)

    monkeypatch.setattr(os, "replace", failing_move_into_place)

    class Archive:  # what write_archive needs of a keras.export.ExportArchive
        def write_out(self, path, verbose=False):
            (Path(path) / "saved_model.pb").write_bytes(b"new")

    with pytest.raises(OSError):
        serving.write_archive(Archive(), str(export), {"new": True})
    assert (export / METADATA_FILE).read_text() == "{}"  # the old export, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]
