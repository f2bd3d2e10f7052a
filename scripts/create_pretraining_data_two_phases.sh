#!/usr/bin/env bash
# Pre-training data for both of the paper's phases from one corpus (Sec. A.2: 90% of the steps at
# 128 tokens, the last 10% at 512), one shard per input file, as many workers as cores:
#   OUT/phase1_seq128/part.tfrecord-0000i-of-N   (max_seq_length 128, max_predictions_per_seq 20)
#   OUT/phase2_seq512/part.tfrecord-0000i-of-N   (max_seq_length 512, max_predictions_per_seq 80)
# Usage: scripts/create_pretraining_data_two_phases.sh "CORPUS_GLOB" OUT [VOCAB] [DUPE_FACTOR]
# Extra flags for both phases (e.g. --do_lower_case=False) go in $EXTRA_FLAGS.
set -euo pipefail
corpus=${1:?usage: $0 CORPUS_GLOB OUT [VOCAB] [DUPE_FACTOR]}
out=${2:?usage: $0 CORPUS_GLOB OUT [VOCAB] [DUPE_FACTOR]}
repo=$(cd "$(dirname "$0")/.." && pwd)
vocab=${3:-$repo/sample_data/vocab.txt}
dupe_factor=${4:-5}  # the original README's example

for phase in "1 128 20" "2 512 80"; do
  read -r number seq_length predictions <<<"$phase"
  dir="$out/phase${number}_seq${seq_length}"
  mkdir -p "$dir"
  # shellcheck disable=SC2086
  python "$repo/create_pretraining_data.py" \
    --input_file="$corpus" \
    --output_file="$dir/part.tfrecord" \
    --vocab_file="$vocab" \
    --max_seq_length="$seq_length" \
    --max_predictions_per_seq="$predictions" \
    --masked_lm_prob=0.15 \
    --random_seed=12345 \
    --dupe_factor="$dupe_factor" \
    --num_workers="$(nproc)" \
    ${EXTRA_FLAGS:-}
done
echo "two phases written under $out"
