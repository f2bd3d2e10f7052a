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

from bert_tf import checkpoints, filesystem, hf_format
from bert_tf.errors import InputError
from bert_tf.fileio import atomic_write_text, staging_folder
from bert_tf.pretrained import (
    LABELS_FILE,
    ModelDirectory,
    load_model_directory,
    write_task_model_files,
)
from bert_tf.tokenization import load_vocab


def write_hf_directory(source: ModelDirectory, directory: str) -> None:
    """config.json, model.safetensors, vocab.txt and tokenizer_config.json into `directory`."""
    model = source.model
    arch = hf_format.architecture(model)
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
    tokenizer = {"tokenizer_class": "BertTokenizer", "do_lower_case": source.do_lower_case}
    tokenizer["model_max_length"] = model.config.max_position_embeddings
    for name, values in (
        (hf_format.CONFIG_FILE, hf_format.hf_config(model.config, arch, labels, regression)),
        (hf_format.TOKENIZER_CONFIG_FILE, tokenizer),
    ):
        atomic_write_text(os.path.join(directory, name), json.dumps(values, indent=2) + "\n")
    hf_format.save_hf_weights(model, os.path.join(directory, hf_format.WEIGHTS_FILE))
    filesystem.copy(source.vocab_file, os.path.join(directory, "vocab.txt"))


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


def write_original_directory(source: ModelDirectory, directory: str) -> int:
    """bert_config.json, bert_model.ckpt (a pooler the source lacks written as newly
    initialized, as transformers makes it), vocab.txt, labels.txt and a task model's
    task_model.json into `directory`. Returns the number of variables written."""
    model, vocab_file = source.model, source.vocab_file
    model.config.check_vocab(len(load_vocab(vocab_file)), vocab_file)
    table = model.original_variable_names()
    written = [n for n in table if n in source.report.loaded or n in hf_format.POOLER_NAMES]
    checkpoints.write_original_checkpoint(
        {name: keras.ops.convert_to_numpy(table[name]) for name in written},
        os.path.join(directory, "bert_model.ckpt"),
    )
    if model.head_scope is not None:
        # The original's files name no head class: task_model.json keeps it (a token
        # classifier and a multiple-choice model have a classifier's variables).
        write_task_model_files(directory, model, vocab_file, source.do_lower_case)
    else:
        model.config.to_json_file(os.path.join(directory, "bert_config.json"))
        filesystem.copy(vocab_file, os.path.join(directory, "vocab.txt"))
    if getattr(model, "num_labels", None) and source.labels:
        labels = "".join(f"{label}\n" for label in source.labels)
        atomic_write_text(os.path.join(directory, LABELS_FILE), labels)
    return len(written)


def convert_checkpoint(
    input_dir: str,
    output_dir: str,
    do_lower_case: bool | None = None,
    vocab_file: str | None = None,
) -> str:
    """Converts `input_dir` the way its files say: a Hugging Face directory to the original
    format, any other model directory of ours to Hugging Face's, with the model's casing
    (`pretrained.read_do_lower_case`, `do_lower_case` its flag). The output folder appears
    whole or not at all. Returns what was done, in words.

    Raises:
        InputError: the input is not a BERT model directory, or its weights do not fit.
    """
    if not filesystem.isdir(input_dir):
        hint = ""
        if re.fullmatch(r"[\w.-]+(/[\w.-]+)?", input_dir) and not filesystem.exists(input_dir):
            hint = (  # bert-base-uncased, google-bert/bert-base-cased: a Hub name
                "; a Hugging Face Hub name? nothing is downloaded here: download the model "
                f"first (huggingface-cli download {input_dir} --local-dir DIR, or "
                "save_pretrained(DIR)) and give --input=DIR"
            )
        raise InputError(f"--input={input_dir}: no such directory{hint}")
    source = load_model_directory(input_dir, do_lower_case=do_lower_case, vocab_file=vocab_file)
    if source.vocab_file is None:
        raise InputError(f"{input_dir}: no vocab.txt (expected a BERT model directory)")
    name = type(source.model).__name__
    with _new_directory(output_dir) as staging:
        if hf_format.is_hf_directory(input_dir):
            count = write_original_directory(source, staging)
            what = f"(Hugging Face) -> {output_dir} (original format): {name} ({count} variables)"
        else:
            write_hf_directory(source, staging)
            arch = hf_format.architecture(source.model)
            what = f"-> {output_dir} (Hugging Face): {name} as {arch}"
    return f"{input_dir} {what}"
