"""Converting a BERT between Hugging Face's format and the original's, the way its files say:
a Hugging Face directory to the original format, any other model directory of ours to
Hugging Face's. The output folder appears whole or not at all.

    from bert_tf.modeling import ConfigModel
    convert_checkpoint("bert-base-uncased/", "uncased_bert/", ConfigModel)   # -> original format
    convert_checkpoint("output/mrpc/", "mrpc_hf/", ConfigModel)              # -> Hugging Face
"""

from __future__ import annotations

import contextlib
import logging
import os
import re

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import staging_folder
from bert_tf.model_io import checkpoints, hf_format, saving
from bert_tf.model_io.loading import load_model_directory
from bert_tf.model_io.source import ModelSource

logger = logging.getLogger(__name__)


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
    model, name = source.model, type(source.model).__name__
    with _new_directory(output_dir) as staging:
        # The way its files say: Hugging Face's to the original's, ours to Hugging Face's.
        target = saving.ORIGINAL if found.converts_to_original else saving.HF
        if target == saving.ORIGINAL and source.report.missing:  # a masked LM's pooler and
            logger.info(  # next-sentence head, as transformers makes them
                "written as newly initialized: %s", checkpoints.listing(source.report.missing)
            )
        saving.save_model_directory(
            staging, model, source.vocab_file, source.do_lower_case, source.labels,
            found.task, target,
        )  # fmt: skip
    if target == saving.ORIGINAL:
        count = len(checkpoints.variable_names(model))
        what = f"(Hugging Face) -> {output_dir} (original format): {name} ({count} variables)"
    else:
        what = f"-> {output_dir} (Hugging Face): {name} as {hf_format.architecture(model)}"
    return f"{input_dir} {what}"
