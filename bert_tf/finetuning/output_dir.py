"""A fine-tuning output_dir checked before a rerun resumes, evaluates or predicts there: the
task, the config and the model it was fine-tuned with must be this run's (the same variables
computing something else would restore silently)."""

from __future__ import annotations

import logging
import os

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.model_io.checkpoints import training_checkpoints
from bert_tf.model_io.source import task_model_description
from bert_tf.training.initialization import task_model_differences

logger = logging.getLogger(__name__)


def check_output_dir_task(output_dir: str, task: str) -> None:
    """Raises `InputError` when `output_dir` holds a model fine-tuned on another task, which
    this run would resume (or evaluate) as if it were its own, and whose results it would
    overwrite."""
    found = fine_tuned_task(output_dir) if training_checkpoints(output_dir) else None
    if found and found[0] and found[0] != task:
        raise InputError(
            f"--output_dir={output_dir}: holds a {found[1]} fine-tuned on {found[0]}, not on "
            f"{task}; give each task an --output_dir of its own"
        )


def fine_tuned_task(directory: str) -> tuple[str, str] | None:
    """(task, model class) that `directory`'s `TASK_MODEL_FILE` says was fine-tuned there
    ("" for a task written before tasks were recorded); None without one."""
    description = task_model_description(directory)
    return None if description is None else (description["task"], description["class_name"])


def fine_tuned_config(config: BertConfig, config_file: str, output_dir: str) -> BertConfig:
    """The config to resume or predict from the fine-tuning `output_dir` with: its own
    bert_config.json once it holds a checkpoint (else `config`, read from `config_file`).

    A model's attention direction belongs to its weights: `config_file` may be the shape
    alone (a left-to-right model stays causal); any other key it sets differently is an error,
    since the checkpoint was trained with the output_dir's.

    Raises:
        InputError: `config` disagrees with the output_dir's config, naming the key and both
            values.
    """
    own = os.path.join(output_dir, "bert_config.json")
    if not (filesystem.isfile(own) and training_checkpoints(output_dir)):
        return config
    trained = BertConfig.from_json_file(own)
    given = config.to_dict()
    for key, value in trained.to_dict().items():
        if key == "causal_attention":
            continue
        if given.get(key) != value:
            raise InputError(
                f"--bert_config_file={config_file}: {key}={given.get(key)!r}, but "
                f"--output_dir={output_dir} was fine-tuned with {key}={value!r} (its "
                "bert_config.json); give that config, or another --output_dir"
            )
    if trained.causal_attention and not config.causal_attention:
        logger.info("%s: fine-tuned left to right, so causal attention", own)
    return trained


def check_fine_tuned_model(output_dir: str, model, do_lower_case: bool, vocab_file: str) -> None:
    """Raises `InputError` when the fine-tuning `output_dir` holds a checkpoint of a task model
    other than this run's: another class, other settings (the feature-based layers), another
    casing or another vocab. The same variables computing something else would restore
    silently, and the rerun would write its task_model.json over the one that says so."""
    if not training_checkpoints(output_dir):
        return
    found = task_model_description(output_dir)
    if found is None:
        return
    mismatches = task_model_differences(found, model)
    if found["do_lower_case"] != do_lower_case:
        mismatches.append(f"do_lower_case={found['do_lower_case']}, not {do_lower_case}")
    own_vocab = os.path.join(output_dir, "vocab.txt")
    if filesystem.isfile(own_vocab) and _read_bytes(own_vocab) != _read_bytes(vocab_file):
        mismatches.append(f"its vocab.txt, not --vocab_file={vocab_file}")
    if mismatches:
        raise InputError(
            f"--output_dir={output_dir}: its checkpoint is of {', '.join(mismatches)} as this "
            "run's options build (its task_model.json); rerun with the options it was trained "
            "with, or give another --output_dir"
        )


def _read_bytes(path: str) -> bytes:
    with filesystem.open_file(path, "rb") as f:
        return f.read()
