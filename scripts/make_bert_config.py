"""Writes the bert_config.json of a named BERT size, for pre-training from scratch.

BERT-BASE and BERT-LARGE are the paper's (Sec. 3: L=12, H=768, A=12 and L=24, H=1024, A=16);
tiny, mini, small and medium are the smaller BERTs Google released later (Turc et al., 2019,
"Well-Read Students Learn Better"). All have the feed-forward size 4H, 512 positions, two
segment types and the original's dropout, GELU and initializer; vocab_size is the number of
lines of --vocab_file.

    python scripts/make_bert_config.py --size=base --vocab_file=sample_data/vocab.txt \
      --output_file=output/bert_base/bert_config.json
"""

from __future__ import annotations

import logging
import os
import sys

from absl import flags

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bert_tf import cli  # noqa: E402
from bert_tf.config import BertConfig  # noqa: E402
from bert_tf.tokenization import load_vocab  # noqa: E402

# name: (L = num_hidden_layers, H = hidden_size, A = num_attention_heads)
SIZES = {
    "tiny": (2, 128, 2),
    "mini": (4, 256, 4),
    "small": (4, 512, 8),
    "medium": (8, 512, 8),
    "base": (12, 768, 12),
    "large": (24, 1024, 16),
}

FLAGS = flags.FLAGS
flags.DEFINE_enum("size", None, list(SIZES), "The architecture.")
flags.DEFINE_string("vocab_file", None, "The vocabulary: vocab_size is its number of lines.")
flags.DEFINE_string("output_file", None, "Where bert_config.json goes.")


def bert_config(size: str, vocab_size: int) -> BertConfig:
    """The config of a named size, with the released models' other values."""
    layers, hidden, heads = SIZES[size]
    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden,
        max_position_embeddings=512,
        type_vocab_size=2,
    )


def main(argv: list[str]) -> None:
    del argv
    cli.require(FLAGS, "size", "vocab_file", "output_file")
    vocab_size = max(load_vocab(FLAGS.vocab_file).values()) + 1
    config = bert_config(FLAGS.size, vocab_size)
    config.to_json_file(FLAGS.output_file)
    logging.info("Wrote BERT-%s (vocab_size=%d) to %s", FLAGS.size, vocab_size, FLAGS.output_file)


if __name__ == "__main__":
    cli.run(main)
