"""The one writer of model directories: `save_model_directory` writes every one this project
makes (run_pretraining.py's `pretrained/`, a fine-tuning output_dir, the converter's two
directions, scripts/make_random_bert.py) with the files that say what it is, casing
included, so that `ModelSource` reads back the model, vocab, casing and labels it was written
with.

    save_model_directory("out/pretrained", pretrainer, "vocab.txt", do_lower_case=False)
    save_model_directory("mrpc_hf", classifier, vocab, True, labels=["0", "1"], format=HF)
"""

from __future__ import annotations

import json
import os

import keras

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text
from bert_tf.model_io import checkpoints, hf_format, task_model
from bert_tf.model_io.source import LABELS_FILE
from bert_tf.tokenization import load_vocab

ORIGINAL = "original"  # bert_config.json, bert_model.ckpt by the original's names
HF = "hf"  # Hugging Face's config.json and model.safetensors
FORMATS = (ORIGINAL, HF)


def save_model_directory(
    directory: str,
    model: keras.Model,
    vocab_file: str | None,
    do_lower_case: bool | None,
    labels: list[str] | None = None,
    task: str = "",
    format: str = ORIGINAL,
    weights: bool = True,
) -> None:
    """Writes `model` into `directory` as a model directory of `format`: its config and weights
    (`weights=False`: the config alone, beside a trainer's own `ckpt-<step>`), vocab.txt (a
    copy of `vocab_file`), tokenizer_config.json (`do_lower_case`; None: not known, so not
    written), a task model's task_model.json (its class, settings, casing and `task`) and
    labels.txt (the `labels` of a classifier's or tagger's outputs; Hugging Face's keeps them
    in config.json's id2label too). Raises `InputError` for labels that do not fit the head."""
    if format not in FORMATS:
        raise ValueError(f"format={format!r}, expected one of {FORMATS}")
    if vocab_file:
        model.config.check_vocab(len(load_vocab(vocab_file)), vocab_file)
    labels = _checked_labels(model, labels)
    filesystem.makedirs(directory)
    if format == HF:
        arch, num_labels = hf_format.architecture(model), getattr(model, "num_labels", None)
        # A classifier's one output without a label is STS-B's score.
        regression = arch == "BertForSequenceClassification" and num_labels == 1 and not labels
        named = labels or (None if regression else _numbered(model))
        values = hf_format.hf_config(model.config, arch, named, regression)
        _write_json(directory, hf_format.CONFIG_FILE, values)
        if weights:
            hf_format.save_hf_weights(model, os.path.join(directory, hf_format.WEIGHTS_FILE))
    else:
        if weights:
            checkpoints.save_original_checkpoint(model, os.path.join(directory, "bert_model.ckpt"))
        model.config.to_json_file(os.path.join(directory, "bert_config.json"))
    if model.head_scope is not None and do_lower_case is not None:
        # The original's files name no head class: task_model.json keeps it (a token
        # classifier and a multiple-choice model have a classifier's variables).
        task_model.write_description(directory, model, do_lower_case, task)
    if do_lower_case is not None:
        tokenizer = {"tokenizer_class": "BertTokenizer", "do_lower_case": do_lower_case}
        tokenizer["model_max_length"] = model.config.max_position_embeddings
        _write_json(directory, hf_format.TOKENIZER_CONFIG_FILE, tokenizer)
    if labels:
        atomic_write_text(os.path.join(directory, LABELS_FILE), "".join(f"{x}\n" for x in labels))
    if vocab_file:
        filesystem.copy(vocab_file, os.path.join(directory, "vocab.txt"))


def _checked_labels(model: keras.Model, labels: list[str] | None) -> list[str] | None:
    num_labels = getattr(model, "num_labels", None)
    if not labels or not num_labels:
        return None
    if len(labels) != num_labels:
        raise InputError(
            f"{LABELS_FILE} has {len(labels)} labels but the model's head has {num_labels} outputs"
        )
    return list(labels)


def _numbered(model: keras.Model) -> list[str] | None:
    """transformers' names for unlabelled outputs (LABEL_0, ...); None for no head."""
    num_labels = getattr(model, "num_labels", None)
    return [f"LABEL_{i}" for i in range(num_labels)] if num_labels else None


def _write_json(directory: str, name: str, values: dict) -> None:
    atomic_write_text(os.path.join(directory, name), json.dumps(values, indent=2) + "\n")
