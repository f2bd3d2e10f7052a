#!/usr/bin/env bash
# The main job on the embedded default, with nothing to download: a tiny BERT (BERT-Tiny's shape,
# random weights, the released uncased vocabulary) is written in the original checkpoint format,
# then extract_features.py reads it back and writes contextual features of the sample text.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-output/quickstart}

python scripts/make_random_bert.py \
  --bert_config_file=sample_data/bert_config.json \
  --output_dir="$out/tiny_bert"

python extract_features.py \
  --input_file=sample_data/sample_text.txt \
  --output_file="$out/features.jsonl" \
  --vocab_file=sample_data/vocab.txt \
  --bert_config_file="$out/tiny_bert/bert_config.json" \
  --init_checkpoint="$out/tiny_bert/bert_model.ckpt" \
  --layers=-1,-2 \
  --max_seq_length=128 \
  --batch_size=8

echo "quickstart: wrote $(wc -l <"$out/features.jsonl") feature lines to $out/features.jsonl"
