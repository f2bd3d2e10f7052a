"""Models loaded in one line from a model directory: the one loader of every kind
`bert_tf.model_dir` describes (`BertEncoder.from_pretrained(directory)`,
`BertClassifier.from_pretrained(directory, num_labels=2)` and every other model class; the
converter, fill_mask).

The classmethods live on `bert_tf.modeling.ConfigModel` and import this module when called:
`bert_tf.modeling` stays backend-agnostic Keras, while reading TF checkpoints needs TensorFlow.

    encoder = BertEncoder.from_pretrained("uncased_L-12_H-768_A-12")
    source = load_model_directory("output/mrpc")   # the class its task_model.json names
"""

from __future__ import annotations

import dataclasses
import logging
import os

import keras

from bert_tf import checkpoints, filesystem, hf_checkpoints
from bert_tf.checkpoints import LoadReport
from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.hf_config import is_hf_directory, read_hf_values
from bert_tf.loading import OBJECT_GRAPH, head_variables, load_checkpoint
from bert_tf.model_dir import (
    TASK_MODEL_FILE,
    model_directory,
    read_config,
    read_do_lower_case,
    read_labels,
    read_task_model,
    task_model_description,
)
from bert_tf.modeling.classifier import BertClassifier
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.multiple_choice import BertMultipleChoice
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.modeling.span_labeler import BertSpanLabeler
from bert_tf.modeling.token_classifier import BertTokenClassifier
from bert_tf.tokenization import tokenizer_config_do_lower_case

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class ModelDirectory:
    """A model loaded from a model directory, with what goes beside its weights."""

    model: keras.Model
    vocab_file: str | None
    do_lower_case: bool
    labels: list[str] | None = None
    report: LoadReport | None = None  # what was loaded, by the checkpoint's names


def require_file(directory: str, name: str) -> str:
    path = os.path.join(directory, name)
    if not filesystem.isfile(path):
        raise InputError(f"{directory}: no {name} (expected a BERT model directory)")
    return path


def load_model_directory(
    path: str | os.PathLike,
    model_class: type | None = None,
    config: BertConfig | None = None,
    do_lower_case: bool | None = None,
    vocab_file: str | None = None,
    require_heads: bool = False,
    **model_args,
) -> ModelDirectory:
    """The model of the model directory `path` (or of the checkpoint prefix `path` names), with
    its vocab, casing and labels: the one loader of every kind the module docstring lists.

    The class: `model_class(config, **model_args)` where given (a fine-tuned output_dir of that
    class gives its own head arguments, such as num_labels, when none are passed); else what
    the files say: task_model.json's class, a Hugging Face config's `architectures`, or the
    heads in the checkpoint (the pre-training heads make a `BertPretrainer`, cls/squad a
    `BertSpanLabeler`, a top-level output_weights a `BertClassifier` as the original's
    run_classifier wrote it, none a `BertEncoder`). A pre-training output_dir is read through
    its pretrained/. `config`: instead of the directory's.

    The casing: task_model.json's or tokenizer_config.json's, else `do_lower_case`, else as
    `model_dir.read_do_lower_case`. The weights: the encoder must be whole; a head the
    checkpoint lacks is newly initialized, which a warning says (an error with
    `require_heads`, or for the class that task_model.json names).

    Raises:
        InputError: no config or checkpoint there, or weights that do not fit the model.
    """
    checkpoint = os.fspath(path)
    directory = model_directory(checkpoint)
    pretrained = os.path.join(directory, "pretrained")
    if (
        model_class is None
        and not filesystem.isfile(os.path.join(directory, TASK_MODEL_FILE))
        and filesystem.isdir(pretrained)
    ):
        checkpoint = directory = pretrained
    description = task_model_description(directory)
    if description is not None and (
        model_class is None
        or (description["class_name"] == model_class.__name__ and not (config or model_args))
    ):
        model, casing = read_task_model(directory)
        require_heads = True  # a fine-tuned model without its head is no model
    else:
        config = config or read_config(directory)
        if model_class is None:
            model = _model_of_checkpoint(checkpoint, config)
        else:
            model = model_class(config, **model_args)
        casing = tokenizer_config_do_lower_case(directory)
        if casing is None:
            casing = read_do_lower_case(directory) if do_lower_case is None else do_lower_case
    report = load_checkpoint(model, checkpoint)
    _check_heads(model, report, require_heads)
    own_vocab = os.path.join(directory, "vocab.txt")
    if filesystem.isfile(own_vocab) or vocab_file is None:
        vocab_file = own_vocab if filesystem.isfile(own_vocab) else None
    return ModelDirectory(model, vocab_file, casing, read_labels(directory), report)


def _check_heads(model: keras.Model, report: LoadReport, required: bool) -> None:
    """Says (or, `required`, raises `InputError`) that the checkpoint gave `model`'s heads no
    weights."""
    heads = head_variables(model)
    if not heads or report.head_loaded:
        return
    what = ", ".join(sorted({variable.path.split("/")[0] for variable in heads}))
    if required:
        raise InputError(
            f"{report.source}: has no weights for the {type(model).__name__}'s head "
            f"({what}); expected the checkpoint of a model with that head"
        )
    logger.warning(
        "%s: the checkpoint %s has no weights for its head (%s), newly initialized: train it "
        "before use",
        type(model).__name__,
        report.source,
        what,
    )


def _model_of_checkpoint(checkpoint: str, config: BertConfig) -> keras.Model:
    """The model class (newly built) that `checkpoint`'s files say, as `load_model_directory`
    describes."""
    directory = model_directory(checkpoint)
    if is_hf_directory(directory):
        return _hf_model(directory, config)
    prefix = checkpoints.resolve_checkpoint_path(checkpoint)
    shapes = checkpoints.checkpoint_reader(prefix).get_variable_to_shape_map()
    if OBJECT_GRAPH in shapes:  # run_pretraining.py's training checkpoint
        return BertPretrainer(config)
    if "cls/seq_relationship/output_weights" in shapes:
        return BertPretrainer(config)
    if "cls/squad/output_weights" in shapes:
        return BertSpanLabeler(config)
    if "output_weights" in shapes:
        return BertClassifier(config, num_labels=shapes["output_weights"][0])
    return BertEncoder(config)


def _hf_model(directory: str, config: BertConfig) -> keras.Model:
    """Our model of the Hugging Face class in `directory` (its `architectures`, else its
    heads' weights)."""
    names = {
        name.removeprefix("bert."): shape
        for name, shape in hf_checkpoints.HfWeights(directory).shapes.items()
    }
    archs = read_hf_values(directory).get("architectures") or []
    if "qa_outputs.weight" in names:
        return BertSpanLabeler(config)
    if "classifier.weight" in names:
        num_labels = names["classifier.weight"][0]
        if "BertForTokenClassification" in archs:
            return BertTokenClassifier(config, num_labels)
        if "BertForMultipleChoice" in archs:
            return BertMultipleChoice(config)
        # BertForSequenceClassification, the class the original's run_classifier is
        return BertClassifier(config, num_labels)
    if "cls.predictions.transform.dense.weight" in names:
        return BertPretrainer(config)
    return BertEncoder(config)


def load_pretrained(model_class: type, path, config: BertConfig | None = None, **model_args):
    """`model_class.from_pretrained(path, config, **model_args)`: see `load_model_directory`."""
    return load_model_directory(path, model_class, config, **model_args).model
