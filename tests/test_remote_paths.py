"""Every path may be a URL, as with the original's tf.gfile: on a TPU pod the data, the
checkpoints and the outputs are in a bucket (gs://). TensorFlow serves ram:// as a file system
inside the process, which stands in for the bucket here: a whole run with every path under it
must work, and must leave nothing on the local disk."""

from __future__ import annotations

import importlib
import json
import os
import tempfile

import pytest
import tensorflow as tf
from absl import flags
from conftest import SAMPLE_DATA, tiny_config, write_tsv
from test_run_classifier import mrpc_rows

from bert_tf.classification.options import ClassifierOptions
from bert_tf.classification.task import run_classifier
from bert_tf.config import BertConfig
from bert_tf.extraction.features import extract_features
from bert_tf.extraction.options import ExtractFeaturesOptions
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text, read_text
from bert_tf.io.tfrecord import count_complete_records
from bert_tf.pretraining.options import PretrainingOptions
from bert_tf.pretraining.run import run_pretraining


def script(name: str):
    """The top-level script `name` as a module, the flags it defines at import taken back (two
    scripts define --input_file)."""
    before = set(flags.FLAGS)
    module = importlib.import_module(name)
    for flag in set(flags.FLAGS) - before:
        delattr(flags.FLAGS, flag)
    return module


@pytest.fixture
def no_local_files(tmp_path, monkeypatch):
    """The working folder and the temporary folder, both empty: the test checks they stay so."""
    work, scratch = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    scratch.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    yield work, scratch
    # AutoGraph's generated sources are TensorFlow's own scratch, not a file of the run.
    left = [name for name in os.listdir(scratch) if not name.startswith("__autograph_generated")]
    assert sorted(os.listdir(work)) == [] and left == []


def _upload(local: str, url: str) -> str:
    tf.io.gfile.makedirs(os.path.dirname(url))
    tf.io.gfile.copy(str(local), url, overwrite=True)
    return url


def test_a_whole_run_with_every_path_a_url_leaves_nothing_on_the_local_disk(
    tmp_path, ram_url, no_local_files
):
    root = ram_url
    vocab = _upload(SAMPLE_DATA / "vocab.txt", f"{root}/model/vocab.txt")
    _upload(SAMPLE_DATA / "sample_text.txt", f"{root}/corpus/sample_text.txt")
    config_file = f"{root}/model/bert_config.json"
    atomic_write_text(config_file, tiny_config().to_json_string())
    local_glue = tmp_path / "glue"
    for split, rows in (("train", mrpc_rows(12, 0)), ("dev", mrpc_rows(5, 1))):
        write_tsv(local_glue / f"{split}.tsv", rows)
        _upload(local_glue / f"{split}.tsv", f"{root}/glue/MRPC/{split}.tsv")
    _upload(local_glue / "dev.tsv", f"{root}/glue/MRPC/test.tsv")
    model = dict(vocab_file=vocab, bert_config_file=config_file, max_seq_length=32)

    records = f"{root}/data/train.tfrecord"
    generator = script("create_pretraining_data")
    generator.create(
        generator.CreatePretrainingDataOptions(
            input_file=f"{root}/corpus/*.txt", output_file=records, vocab_file=vocab,
            max_seq_length=32, max_predictions_per_seq=5, dupe_factor=1,
        )
    )  # fmt: skip
    assert count_complete_records(records) > 4

    pretraining_dir = f"{root}/pretraining"
    run_pretraining(
        PretrainingOptions(
            input_file=records, output_dir=pretraining_dir, do_train=True, do_eval=True,
            objective="ltr",  # left to right: its causal attention must be read back from the URL
            num_train_steps=2, num_warmup_steps=1, train_batch_size=4, eval_batch_size=4,
            max_eval_steps=1, max_predictions_per_seq=5, **model,
        )
    )  # fmt: skip
    assert "global_step = 2" in read_text(f"{pretraining_dir}/eval_results.txt", "results")

    mrpc_dir, export_dir = f"{root}/mrpc", f"{root}/export"
    run_classifier(
        ClassifierOptions(
            task_name="MRPC", data_dir=f"{root}/glue/MRPC", output_dir=mrpc_dir,
            init_checkpoint=f"{pretraining_dir}/pretrained/bert_model.ckpt", do_train=True,
            do_eval=True, do_predict=True, train_batch_size=4, num_train_epochs=1.0,
            export_dir=export_dir, **model,
        )
    )  # fmt: skip
    assert "eval_accuracy" in read_text(f"{mrpc_dir}/eval_results.txt", "results")
    assert BertConfig.from_json_file(f"{mrpc_dir}/bert_config.json").causal_attention
    assert filesystem.isfile(f"{mrpc_dir}/test_results.tsv")
    assert filesystem.isfile(f"{export_dir}/saved_model.pb")
    assert filesystem.glob(f"{export_dir}.tmp-*") == []

    sentences = f"{root}/sentences.txt"
    atomic_write_text(sentences, "The company said profits rose.\nShares fell ||| He said.\n")
    features = f"{root}/features.jsonl"
    extract_features(
        ExtractFeaturesOptions(
            input_file=sentences, output_file=features, init_checkpoint=mrpc_dir, layers="-1",
            batch_size=2, **model,
        )
    )  # fmt: skip
    lines = read_text(features, "features").splitlines()
    assert [json.loads(line)["linex_index"] for line in lines] == [0, 1]
    filesystem.rmtree(root)
