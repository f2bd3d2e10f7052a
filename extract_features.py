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

import tensorflow as tf
from absl import flags

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.extract_features import (
    convert_examples_to_features,
    extract,
    feature_json,
    parse_layer_indexes,
    read_examples,
)
from bert_tf.fileio import atomic_open, check_output_file
from bert_tf.loading import load_checkpoint
from bert_tf.model_dir import adopt_checkpoint_attention
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.tokenization import (
    FullTokenizer,
    require_tokens,
    validate_case_matches_checkpoint,
)

FLAGS = flags.FLAGS

flags.DEFINE_string("input_file", None, "Text, one example per line; `text_a ||| text_b` pairs.")
flags.DEFINE_string("output_file", None, "Where the JSON lines go.")
flags.DEFINE_string("layers", "-1,-2,-3,-4", "Comma-separated indexes of the layers to output.")
flags.DEFINE_string(
    "bert_config_file", None, "The bert_config.json of the pre-trained model (its architecture)."
)
flags.DEFINE_integer(
    "max_seq_length",
    128,
    "The maximum total input length after WordPiece tokenization; longer inputs are "
    "truncated, shorter ones padded.",
)
flags.DEFINE_string(
    "init_checkpoint",
    None,
    "The pre-trained checkpoint (bert_model.ckpt), or a Hugging Face BERT directory.",
)
flags.DEFINE_string("vocab_file", None, "The vocabulary the model was trained on.")
flags.DEFINE_bool(
    "do_lower_case", True, "Lower-case the input: True for uncased models, False for cased ones."
)
flags.DEFINE_integer("batch_size", 32, "Batch size for predictions.")
flags.DEFINE_bool("use_tpu", False, "Run on the TPU named by --master.")
flags.DEFINE_string("master", None, "With --use_tpu: the TPU address (grpc://ip:8470) or name.")
flags.DEFINE_integer(
    "num_tpu_cores", 8, "Accepted for compatibility; TF2 reads the TPU topology itself."
)
flags.DEFINE_bool(
    "use_one_hot_embeddings",
    False,
    "Accepted for compatibility; the embedding gather gives the same values on every device.",
)


def check_flags() -> BertConfig:
    cli.require(FLAGS, "input_file", "output_file", "bert_config_file", "vocab_file")
    check_output_file(FLAGS.output_file, "--output_file")
    config = BertConfig.from_json_file(FLAGS.bert_config_file)
    if FLAGS.max_seq_length > config.max_position_embeddings:
        raise InputError(
            f"--max_seq_length={FLAGS.max_seq_length} is longer than the model's "
            f"max_position_embeddings={config.max_position_embeddings} "
            f"({FLAGS.bert_config_file})"
        )
    if FLAGS.max_seq_length < 3:
        raise InputError(f"--max_seq_length={FLAGS.max_seq_length}, expected at least 3")
    if FLAGS.batch_size < 1:
        raise InputError(f"--batch_size={FLAGS.batch_size}, expected a positive integer")
    if FLAGS.init_checkpoint:
        config = adopt_checkpoint_attention(config, FLAGS.init_checkpoint)
    return config


def strategy() -> tf.distribute.Strategy:
    if not FLAGS.use_tpu:
        return tf.distribute.get_strategy()
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=FLAGS.master)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)


def main(argv: list[str]) -> None:
    del argv
    config = check_flags()
    layer_indexes = parse_layer_indexes(FLAGS.layers, config.num_hidden_layers)
    validate_case_matches_checkpoint(FLAGS.do_lower_case, FLAGS.init_checkpoint)
    tokenizer = FullTokenizer(FLAGS.vocab_file, do_lower_case=FLAGS.do_lower_case)
    require_tokens(tokenizer.vocab, FLAGS.vocab_file, ("[CLS]", "[SEP]"))
    config.check_vocab(len(tokenizer.vocab), FLAGS.vocab_file)
    examples = read_examples(FLAGS.input_file)
    features = convert_examples_to_features(examples, FLAGS.max_seq_length, tokenizer)
    if config.type_vocab_size < 2 and any(f.input_type_ids.count(1) for f in features):
        raise InputError(
            f"--input_file={FLAGS.input_file} has `text_a ||| text_b` pairs but the model has "
            f"type_vocab_size={config.type_vocab_size} ({FLAGS.bert_config_file}), so it has "
            "no embedding for a second segment"
        )

    with strategy().scope():
        encoder = BertEncoder(config)
    if FLAGS.init_checkpoint:
        load_checkpoint(encoder, FLAGS.init_checkpoint)
    else:
        logging.warning("No --init_checkpoint: the features come from randomly initialized weights")

    with atomic_open(FLAGS.output_file) as writer:
        for feature, values in extract(encoder, features, layer_indexes, FLAGS.batch_size):
            writer.write(feature_json(feature, layer_indexes, values) + "\n")
    logging.info("Wrote %d examples to %s", len(features), FLAGS.output_file)


if __name__ == "__main__":
    cli.run(main)
