"""Converting a BERT between Hugging Face's format and the original's, the way its files say:
a Hugging Face directory to the original format, any other model directory of ours to
Hugging Face's. The output folder appears whole or not at all.

    from bert_tf.modeling import ConfigModel
    convert_checkpoint("bert-base-uncased/", "uncased_bert/", ConfigModel)   # -> original format
    convert_checkpoint("output/mrpc/", "mrpc_hf/", ConfigModel)              # -> Hugging Face
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re

import keras

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text, staging_folder
from bert_tf.model_io import checkpoints, hf_format
from bert_tf.model_io.loading import ModelDirectory, load_model_directory
from bert_tf.model_io.source import LABELS_FILE, ModelSource, write_task_model_files
from bert_tf.tokenization import load_vocab

logger = logging.getLogger(__name__)


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
    """bert_config.json, bert_model.ckpt, vocab.txt, labels.txt and a task model's
    task_model.json into `directory`: every variable of the model, those the source lacks (a
    masked LM's pooler and next-sentence head) as newly initialized, as transformers makes
    them. Returns the number of variables written."""
    model, vocab_file = source.model, source.vocab_file
    model.config.check_vocab(len(load_vocab(vocab_file)), vocab_file)
    table = checkpoints.variable_names(model)
    if source.report.missing:
        logger.info("written as newly initialized: %s", checkpoints.listing(source.report.missing))
    checkpoints.write_original_checkpoint(
        {name: keras.ops.convert_to_numpy(variable) for name, variable in table.items()},
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
    return len(table)


def convert_checkpoint(
    input_dir: str,
    output_dir: str,
    model_class: type,
    do_lower_case: bool | None = None,
    vocab_file: str | None = None,
) -> str:
    """Converts `input_dir` the way its files say: a Hugging Face directory to the original
    format, any other model directory of ours to Hugging Face's, with the model's casing
    (`ModelSource.do_lower_case`, `do_lower_case` its flag). `model_class`: the family root
    (`ConfigModel`, for the class the files name) or a class to build. The output folder
    appears whole or not at all. Returns what was done, in words.

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
    found = ModelSource(input_dir)
    source = load_model_directory(found, model_class, None, do_lower_case, vocab_file)
    if source.vocab_file is None:
        raise InputError(f"{input_dir}: no vocab.txt (expected a BERT model directory)")
    name = type(source.model).__name__
    with _new_directory(output_dir) as staging:
        if found.is_hf:
            count = write_original_directory(source, staging)
            what = f"(Hugging Face) -> {output_dir} (original format): {name} ({count} variables)"
        else:
            write_hf_directory(source, staging)
            arch = hf_format.architecture(source.model)
            what = f"-> {output_dir} (Hugging Face): {name} as {arch}"
    return f"{input_dir} {what}"
