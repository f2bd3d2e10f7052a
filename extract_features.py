r"""Extracts fixed contextual features from a pre-trained BERT (the original's script and flags).

    python extract_features.py --input_file=input.txt --output_file=output.jsonl \
      --vocab_file=$BERT_BASE_DIR/vocab.txt --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --layers=-1,-2,-3,-4 \
      --max_seq_length=128 --batch_size=8
"""

from __future__ import annotations

from bert_tf import cli
from bert_tf.extraction.options import ExtractFeaturesOptions

cli.define_flags(ExtractFeaturesOptions)


def main(options: ExtractFeaturesOptions) -> None:
    from bert_tf.extraction.features import extract_features  # TensorFlow: once the flags pass

    extract_features(options)


if __name__ == "__main__":
    cli.run_with_options(ExtractFeaturesOptions, main)
