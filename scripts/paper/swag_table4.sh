#!/usr/bin/env bash
# Paper Table 4 (SWAG accuracy: BASE Dev 81.6; LARGE Dev 86.6, Test 86.3), with the paper's
# settings (Sec. 4.4): 3 epochs, lr 2e-5, batch 16; each example is four sequences
# `[CLS] sent1 [SEP] sent2 ending_i [SEP]` of 128 tokens, scored by one vector on [CLS].
# Trains on train.csv, evaluates on val.csv (Dev) and predicts test.csv (predictions.csv, for
# the Test number); prints eval_results.txt.
#
# Usage: scripts/paper/swag_table4.sh base|large|small [OUT] [--dry_run]
#   (OUT: at small default output/swag_small; at base and large required, may be gs://)
#   base, large: BERT_DIR (vocab.txt, bert_config.json, bert_model.ckpt, e.g. Google's
#                uncased_L-12_H-768_A-12) and SWAG_DIR (SWAG's train.csv, val.csv, test.csv)
#                must be set. Extra run_swag flags in EXTRA_FLAGS (e.g. "--dtype=mixed_float16").
#   small:       about a minute on a laptop CPU: BERT-Tiny (a random one unless BERT_DIR is
#                set) on a synthetic SWAG-format task that scripts/swag_sample.py writes (3,000
#                training examples; the right ending names the context's object), sequences
#                of 32 tokens, lr 2e-4 (a random model needs more than 2e-5), --seed=1. The
#                numbers only show the pipeline runs (Dev ~0.9 where the paper has 81.6).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/paper/common.sh
table_args swag "$@"

case $size in
  base|large)
    : "${BERT_DIR:?set BERT_DIR to the pre-trained model}" "${SWAG_DIR:?set SWAG_DIR}"
    bert_dir=$BERT_DIR swag_dir=$SWAG_DIR
    settings=(--max_seq_length=128 --learning_rate=2e-5)
    ;;
  small)
    bert_dir=${BERT_DIR:-$out/bert}
    random_bert tiny "$bert_dir"
    swag_dir=$out/data
    run python scripts/swag_sample.py --output_dir="$swag_dir" --train_examples=3000 \
      --dev_examples=200 --test_examples=100
    settings=(--max_seq_length=32 --learning_rate=2e-4 --log_steps=50 --seed=1)
    ;;
esac

run python run_swag.py --data_dir="$swag_dir" --vocab_file="$bert_dir/vocab.txt" \
  --bert_config_file="$bert_dir/bert_config.json" \
  --init_checkpoint="$bert_dir/bert_model.ckpt" --output_dir="$out" \
  --do_train --do_eval --do_predict --train_batch_size=16 --num_train_epochs=3.0 \
  "${settings[@]}" "${extra[@]}"
read_file "$out/eval_results.txt"
