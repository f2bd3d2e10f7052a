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

from bert_tf.config import BertConfig
from bert_tf.options import Options, check_options, option, options


@options
class MakeRandomBertOptions(Options):
    bert_config_file: str = option(
        None, "The architecture, an original bert_config.json.", required=True
    )
    output_dir: str = option(None, "Where bert_config.json and bert_model.ckpt go.", required=True)
    random_seed: int = option(12345, "Seed of the initialization.")


def make_random_bert(options: MakeRandomBertOptions) -> None:
    check_options(options)
    import keras  # TensorFlow: once the flags pass

    from bert_tf.model_io.saving import save_model_directory
    from bert_tf.modeling.pretrainer import BertPretrainer

    config = BertConfig.from_json_file(options.bert_config_file)
    keras.utils.set_random_seed(options.random_seed)
    model = BertPretrainer(config)
    save_model_directory(options.output_dir, model, vocab_file=None, do_lower_case=None)
    prefix = os.path.join(options.output_dir, "bert_model.ckpt")
    logging.info("Wrote a random BERT (%d weights) to %s", model.count_params(), prefix)


if __name__ == "__main__":
    cli.define_flags(MakeRandomBertOptions)
    cli.run_with_options(MakeRandomBertOptions, make_random_bert)
