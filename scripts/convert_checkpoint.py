r"""Converts a BERT between Hugging Face's format and the original's, the way the input says.

A Hugging Face BERT directory (config.json and model.safetensors, or its shards) becomes an
original-format one that every script reads (bert_config.json, bert_model.ckpt, vocab.txt, and
labels.txt for a classifier's or tagger's labels). Any of our model directories becomes a
Hugging Face one (config.json, model.safetensors, vocab.txt, tokenizer_config.json) that
transformers loads with the matching class: an original-format directory, run_pretraining.py's
output_dir (its pretrained/), or the output_dir of run_classifier.py, run_ner.py, run_squad.py
or run_swag.py. Names and shapes are checked before anything is written; the output folder
appears whole or not at all.

    python scripts/convert_checkpoint.py --input=bert-base-uncased --output=uncased_bert
    python scripts/convert_checkpoint.py --input=/tmp/mrpc_output --output=mrpc_hf

(A Hugging Face Hub model is downloaded beforehand, e.g. `huggingface-cli download
bert-base-uncased --local-dir bert-base-uncased`: nothing is downloaded at run time.)
"""

from __future__ import annotations

from bert_tf import cli  # first: it quiets TensorFlow's start-up, before TensorFlow loads

# isort: split
import logging

from bert_tf.options import Options, check_options, option, options


@options
class ConvertCheckpointOptions(Options):
    input: str = option(None, "The model directory to convert.", required=True)
    output: str = option(None, "The new directory (absent or empty).", required=True)
    do_lower_case: bool | None = option(
        None,
        "To Hugging Face: the casing written to tokenizer_config.json (default: as the input's "
        "files, name or vocab say, else True; a value its files or name contradict is an "
        "error).",
    )
    vocab_file: str | None = option(
        None, "To Hugging Face: the vocabulary, where the input has no vocab.txt."
    )


def convert(options: ConvertCheckpointOptions) -> None:
    check_options(options)
    from bert_tf.model_io.convert import convert_checkpoint  # TensorFlow: once the flags pass
    from bert_tf.modeling import ConfigModel

    logging.info(
        "%s",
        convert_checkpoint(
            options.input, options.output, ConfigModel, options.do_lower_case, options.vocab_file
        ),
    )


if __name__ == "__main__":
    cli.define_flags(ConvertCheckpointOptions)
    cli.run_with_options(ConvertCheckpointOptions, convert)
