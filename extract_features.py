r"""Extracts fixed contextual features from a pre-trained BERT (the original's script and flags).

    python extract_features.py --input_file=input.txt --output_file=output.jsonl \
      --vocab_file=$BERT_BASE_DIR/vocab.txt --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --layers=-1,-2,-3,-4 \
      --max_seq_length=128 --batch_size=8
"""

from __future__ import annotations

from bert_tf import cli  # first: it quiets TensorFlow's start-up, before TensorFlow loads

# isort: split
import logging

from bert_tf.config import BertConfig
from bert_tf.distribute import get_strategy
from bert_tf.errors import InputError
from bert_tf.extract_features import (
    convert_examples_to_features,
    extract,
    feature_json,
    parse_layer_indexes,
    read_examples,
)
from bert_tf.fileio import atomic_open, check_output_file
from bert_tf.model_io.loading import load_checkpoint
from bert_tf.model_io.source import ModelSource, model_do_lower_case
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.options import Options, at_least, check_options, option, options, positive
from bert_tf.tokenization import FullTokenizer, require_tokens


@options
class ExtractFeaturesOptions(Options):
    """The original's flags, with its defaults."""

    input_file: str = option(
        None, "Text, one example per line; `text_a ||| text_b` pairs.", required=True
    )
    output_file: str = option(None, "Where the JSON lines go.", required=True)
    layers: str = option("-1,-2,-3,-4", "Comma-separated indexes of the layers to output.")
    bert_config_file: str = option(
        None, "The bert_config.json of the pre-trained model (its architecture).", required=True
    )
    max_seq_length: int = option(
        128,
        "The maximum total input length after WordPiece tokenization; longer inputs are "
        "truncated, shorter ones padded.",
        at_least(3),
    )
    init_checkpoint: str | None = option(
        None, "The pre-trained checkpoint (bert_model.ckpt), or a Hugging Face BERT directory."
    )
    vocab_file: str = option(None, "The vocabulary the model was trained on.", required=True)
    do_lower_case: bool | None = option(
        None,
        "Lower-case the input: True for uncased models, False for cased ones (default: as the "
        "model's files, name or vocab say, else True).",
    )
    batch_size: int = option(32, "Batch size for predictions.", positive)
    use_tpu: bool = option(False, "Run on the TPU named by --master.")
    master: str | None = option(None, "With --use_tpu: the TPU address (grpc://ip:8470) or name.")
    num_tpu_cores: int = option(8, "Accepted for compatibility; TF2 reads the TPU topology itself.")
    use_one_hot_embeddings: bool = option(
        False,
        "Accepted for compatibility; the embedding gather gives the same values on every device.",
    )

    def check(self) -> None:
        super().check()
        check_output_file(self.output_file, "--output_file")


def read_config(options: ExtractFeaturesOptions, source: ModelSource | None) -> BertConfig:
    """The model's config, checked against the options; a checkpoint (`source`) pre-trained
    left to right keeps its causal attention."""
    config = BertConfig.from_json_file(options.bert_config_file)
    if options.max_seq_length > config.max_position_embeddings:
        raise InputError(
            f"--max_seq_length={options.max_seq_length} is longer than the model's "
            f"max_position_embeddings={config.max_position_embeddings} "
            f"({options.bert_config_file})"
        )
    return source.with_attention(config) if source is not None else config


def extract_features(options: ExtractFeaturesOptions) -> None:
    check_options(options)
    source = ModelSource(options.init_checkpoint) if options.init_checkpoint else None
    config = read_config(options, source)
    layer_indexes = parse_layer_indexes(options.layers, config.num_hidden_layers)
    do_lower_case = model_do_lower_case(source, options.do_lower_case, options.vocab_file)
    tokenizer = FullTokenizer(options.vocab_file, do_lower_case=do_lower_case)
    require_tokens(tokenizer.vocab, options.vocab_file, ("[CLS]", "[SEP]"))
    config.check_vocab(len(tokenizer.vocab), options.vocab_file)
    examples = read_examples(options.input_file)
    features = convert_examples_to_features(examples, options.max_seq_length, tokenizer)
    if config.type_vocab_size < 2 and any(f.input_type_ids.count(1) for f in features):
        raise InputError(
            f"--input_file={options.input_file} has `text_a ||| text_b` pairs but the model has "
            f"type_vocab_size={config.type_vocab_size} ({options.bert_config_file}), so it has "
            "no embedding for a second segment"
        )

    strategy = get_strategy("tpu" if options.use_tpu else "one_device", tpu_name=options.master)
    with strategy.scope():
        encoder = BertEncoder(config)
    if source is not None:
        load_checkpoint(encoder, source)
    else:
        logging.warning("No --init_checkpoint: the features come from randomly initialized weights")

    with atomic_open(options.output_file) as writer:
        for feature, values in extract(encoder, features, layer_indexes, options.batch_size):
            writer.write(feature_json(feature, layer_indexes, values) + "\n")
    logging.info("Wrote %d examples to %s", len(features), options.output_file)


cli.define_flags(ExtractFeaturesOptions)

if __name__ == "__main__":
    cli.run_with_options(ExtractFeaturesOptions, extract_features)
