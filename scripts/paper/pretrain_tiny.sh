#!/usr/bin/env bash
# The paper's two-phase recipe (scripts/paper/pretrain_bert.sh) scaled down to run on a CPU in a
# few minutes, with nothing to download: BERT-Tiny (L=2, H=128, A=2) on the Python standard
# library's docstrings with a WordPiece vocab learned from them; phase 1 at 128 tokens for 90% of
# the steps, phase 2 at 512 tokens for the last 10%, starting from phase 1's pretrained/.
# Usage: scripts/paper/pretrain_tiny.sh [OUT] [--dry_run]   (default output/paper_tiny)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/paper/common.sh
split_args --dry_run "$@"
out=${positional[0]:-output/paper_tiny}
make_folder "$out"

run python scripts/stdlib_corpus.py --output_file="$out/corpus.txt"
run python create_vocab.py --input_file="$out/corpus.txt" --output_file="$out/vocab.txt" \
  --vocab_size=4000 --min_count=3
run bash scripts/create_pretraining_data_two_phases.sh "$out/corpus.txt" "$out/data" \
  "$out/vocab.txt" 2

DATA=$out/data OUT=$out VOCAB=$out/vocab.txt PLATFORM=cpu \
  TRAIN_BATCH_SIZE=16 LEARNING_RATE=2e-4 \
  PHASE1_STEPS=270 PHASE1_WARMUP=30 PHASE2_STEPS=30 PHASE2_WARMUP=3 \
  SAVE_CHECKPOINTS_STEPS=1000 LOG_STEPS=30 \
  bash scripts/paper/pretrain_bert.sh tiny "${options[@]}"
