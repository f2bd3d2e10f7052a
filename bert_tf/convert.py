"""Converting a BERT between Hugging Face's format and the original's, the way its files say:
a Hugging Face directory to the original format, any other model directory of ours to
Hugging Face's. The output folder appears whole or not at all.

    convert_checkpoint("bert-base-uncased/", "uncased_L-12_H-768_A-12/")   # -> original format
    convert_checkpoint("output/mrpc/", "mrpc_hf/")                         # -> Hugging Face
"""

from __future__ import annotations

import contextlib
import json
import os
import re

import keras

from bert_tf import checkpoints, filesystem
from bert_tf.errors import InputError
from bert_tf.fileio import atomic_write_text, staging_folder
from bert_tf.hf_format import (
    CONFIG_FILE,
    POOLER_NAMES,
    TOKENIZER_CONFIG_FILE,
    WEIGHTS_FILE,
    architecture,
    hf_config,
    is_hf_directory,
    save_hf_weights,
    tokenizer_config,
)
from bert_tf.model_dir import LABELS_FILE, write_task_model_files
from bert_tf.pretrained import ModelDirectory, load_model_directory, require_file
from bert_tf.tokenization import load_vocab


def write_hf_directory(source: ModelDirectory, directory: str) -> None:
    """config.json, model.safetensors, vocab.txt and tokenizer_config.json into `directory`."""
    model = source.model
    arch = architecture(model)
    # A classifier's or tagger's outputs are labelled; one output without labels is STS-B's score.
    num_labels = getattr(model, "num_labels", None)
    regression = arch == "BertForSequenceClassification" and num_labels == 1 and not source.labels
    labels = source.labels
    if num_labels and not regression:
        labels = labels or [f"LABEL_{i}" for i in range(model.num_labels)]
        if len(labels) != model.num_labels:
            raise InputError(
                f"{LABELS_FILE} has {len(labels)} labels but the model's head has "
                f"{model.num_labels} outputs"
            )
    values = hf_config(model.config, arch, labels, regression)
    atomic_write_text(os.path.join(directory, CONFIG_FILE), json.dumps(values, indent=2) + "\n")
    save_hf_weights(model, os.path.join(directory, WEIGHTS_FILE))
    filesystem.copy(source.vocab_file, os.path.join(directory, "vocab.txt"))
    atomic_write_text(
        os.path.join(directory, TOKENIZER_CONFIG_FILE),
        json.dumps(tokenizer_config(model.config, source.do_lower_case), indent=2) + "\n",
    )


@contextlib.contextmanager
def _new_directory(output: str):
    """A temporary folder beside `output`, renamed to `output` when the block succeeds."""
    output = os.path.normpath(output) if not filesystem.is_url(output) else output.rstrip("/")
    if filesystem.exists(output) and (not filesystem.isdir(output) or filesystem.listdir(output)):
        raise InputError(f"--output={output} exists and is not empty; give a new folder")
    with staging_folder(output) as staging:
        yield staging
        if filesystem.isdir(output):  # empty: the check above
            filesystem.rmtree(output)
        filesystem.rename(staging, output, last=("bert_config.json", "config.json"))


def hf_to_original(input_dir: str, output_dir: str) -> str:
    """A Hugging Face BERT directory -> an original-format one: bert_config.json,
    bert_model.ckpt (the original's names; a pooler the source lacks is written as newly
    initialized, as transformers would make it), vocab.txt, labels.txt for a classifier's or
    tagger's id2label, and a task model's task_model.json. Returns what was converted, in
    words."""
    source = load_model_directory(input_dir)
    model = source.model
    vocab_file = require_file(input_dir, "vocab.txt")
    model.config.check_vocab(len(load_vocab(vocab_file)), vocab_file)
    table = model.original_variable_names()
    written = [name for name in table if name in source.report.loaded or name in POOLER_NAMES]
    with _new_directory(output_dir) as staging:
        checkpoints.write_original_checkpoint(
            {name: keras.ops.convert_to_numpy(table[name]) for name in written},
            os.path.join(staging, "bert_model.ckpt"),
        )
        if model.head_scope is not None:
            # The original's files name no head class: task_model.json keeps it (a token
            # classifier and a multiple-choice model have a classifier's variables).
            write_task_model_files(staging, model, vocab_file, source.do_lower_case)
        else:
            model.config.to_json_file(os.path.join(staging, "bert_config.json"))
            filesystem.copy(vocab_file, os.path.join(staging, "vocab.txt"))
        if getattr(model, "num_labels", None) and source.labels:
            atomic_write_text(
                os.path.join(staging, LABELS_FILE),
                "".join(f"{label}\n" for label in source.labels),
            )
    return f"{type(model).__name__} ({len(written)} variables)"


def to_hf(
    input_dir: str,
    output_dir: str,
    do_lower_case: bool | None = None,
    vocab_file: str | None = None,
) -> str:
    """One of our directories (see `pretrained.load_model_directory`) -> a Hugging Face one,
    with the model's casing (`model_dir.read_do_lower_case`: `do_lower_case` is its flag).
    Returns what was converted, in words."""
    source = load_model_directory(input_dir, do_lower_case=do_lower_case, vocab_file=vocab_file)
    if source.vocab_file is None:
        require_file(input_dir, "vocab.txt")
    arch = architecture(source.model)
    with _new_directory(output_dir) as staging:
        write_hf_directory(source, staging)
    return f"{type(source.model).__name__} as {arch}"


def convert_checkpoint(
    input_dir: str,
    output_dir: str,
    do_lower_case: bool | None = None,
    vocab_file: str | None = None,
) -> str:
    """Converts `input_dir` the way its files say: a Hugging Face directory (config.json and
    safetensors) to the original format, anything else of ours to Hugging Face's. The output
    folder appears whole or not at all. Returns what was done, in words.

    Raises:
        InputError: the input is not a BERT model directory, or its weights do not fit.
    """
    if not filesystem.isdir(input_dir):
        hint = ""
        if re.fullmatch(r"[\w.-]+(/[\w.-]+)?", input_dir) and not filesystem.exists(input_dir):
            # bert-base-uncased, google-bert/bert-base-cased: a Hub name, not a folder here.
            hint = (
                "; a Hugging Face Hub name? nothing is downloaded here: download the model "
                f"first (huggingface-cli download {input_dir} --local-dir DIR, or "
                "save_pretrained(DIR)) and give --input=DIR"
            )
        raise InputError(f"--input={input_dir}: no such directory{hint}")
    if is_hf_directory(input_dir):
        what = hf_to_original(input_dir, output_dir)
        return f"{input_dir} (Hugging Face) -> {output_dir} (original format): {what}"
    what = to_hf(input_dir, output_dir, do_lower_case, vocab_file)
    return f"{input_dir} -> {output_dir} (Hugging Face): {what}"
