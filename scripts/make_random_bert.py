r"""Writes a randomly initialized BERT as an original-format model directory.

The directory holds bert_config.json and bert_model.ckpt (encoder and pre-training heads, under
the original variable names), initialized as the original does (truncated normal with
initializer_range). It is what the quickstart feeds to extract_features.py, and a starting point
for pre-training from scratch.

    python scripts/make_random_bert.py --bert_config_file=sample_data/bert_config.json \
      --output_dir=output/tiny_bert
"""

from __future__ import annotations

from bert_tf import cli  # first: it quiets TensorFlow's start-up, before TensorFlow loads

# isort: split
import logging
import os

import keras
from absl import flags

from bert_tf.checkpoints import save_original_checkpoint
from bert_tf.config import BertConfig
from bert_tf.modeling.pretrainer import BertPretrainer

FLAGS = flags.FLAGS
flags.DEFINE_string("bert_config_file", None, "The architecture, an original bert_config.json.")
flags.DEFINE_string("output_dir", None, "Where bert_config.json and bert_model.ckpt go.")
flags.DEFINE_integer("random_seed", 12345, "Seed of the initialization.")
flags.mark_flags_as_required(["bert_config_file", "output_dir"])


def main(argv: list[str]) -> None:
    del argv
    config = BertConfig.from_json_file(FLAGS.bert_config_file)
    keras.utils.set_random_seed(FLAGS.random_seed)
    model = BertPretrainer(config)
    config.to_json_file(os.path.join(FLAGS.output_dir, "bert_config.json"))
    prefix = save_original_checkpoint(model, os.path.join(FLAGS.output_dir, "bert_model.ckpt"))
    logging.info("Wrote a random BERT (%d weights) to %s", model.count_params(), prefix)


if __name__ == "__main__":
    cli.run(main)
