#!/usr/bin/env bash
# Pre-trains BERT-BASE or BERT-LARGE from scratch with the paper's recipe (Sec. 3.1 and A.2):
# batch 256 sequences, Adam with lr 1e-4, 10,000 warmup steps then linear decay, 1,000,000 steps:
#   phase 1, 90% of the steps (900,000) at 128 tokens, 20 masked-LM predictions per sequence;
#   phase 2, the last 10% (100,000) at 512 tokens, 80 predictions, starting from phase 1's model
#            (OUT/phase1/pretrained/bert_model.ckpt) with its own step count and warmup, as a
#            second run of the original's run_pretraining.py with --init_checkpoint.
#
# Usage: scripts/paper/pretrain_bert.sh base|large [--dry_run]   (or tiny, mini, small, medium,
#        or any L-<layers>_H-<hidden>_A-<heads>, as scripts/make_bert_config.py names shapes;
#        --dry_run prints the commands and runs nothing)
# Rerunning the same command resumes where it stopped (each phase from its latest ckpt-N).
#
# Settings, from the environment:
#   DATA        folder holding phase1_seq128/ and phase2_seq512/, as written by
#               scripts/create_pretraining_data_two_phases.sh "CORPUS_GLOB" DATA VOCAB
#   OUT         OUT/phase1/ and OUT/phase2/: ckpt-N, train/ and eval/ summaries,
#               eval_results.txt, and pretrained/ (the model in the original format)
#   VOCAB       the vocab.txt the data was made with (default: the released uncased one, 30522)
#   BERT_CONFIG an existing bert_config.json; by default OUT/bert_config.json is written for SIZE
#   PLATFORM    tpu: --use_tpu --tpu_name=$TPU_NAME (TPU_ZONE, GCP_PROJECT if needed), float32
#                    as the original; DATA, OUT and VOCAB gs:// URLs (a pod's workers share
#                    them; a single TPU VM may use local paths). TPU_CORES (default 8, a v3-8)
#                    and TPU_BATCH_PHASE1/2 (the sequences one core holds: as GPU_BATCH below,
#                    a v3 core has 16 GB) decide the gradient accumulation, as for GPUs
#               gpu: the GPUs of this machine (NUM_GPUS), mixed_float16 and XLA
#               cpu: one device, float32 (for the tiny version and smoke tests)
#   GPU_BATCH_PHASE1, GPU_BATCH_PHASE2 (gpu only): the sequences one GPU holds at once. Each
#               update still sees TRAIN_BATCH_SIZE sequences: the gradients of
#               TRAIN_BATCH_SIZE / (NUM_GPUS * GPU_BATCH) micro-batches are summed first
#               (--gradient_accumulation_steps). The defaults suit 16 GB GPUs (base 32 and 8,
#               large 8 and 2); raise them on larger GPUs, the result is the same.
#   TRAIN_BATCH_SIZE, LEARNING_RATE, PHASE1_STEPS, PHASE1_WARMUP, PHASE2_STEPS, PHASE2_WARMUP,
#   EVAL_BATCH_SIZE (64), SAVE_CHECKPOINTS_STEPS, LOG_STEPS: the recipe's numbers, for smoke tests
#               and scaled-down runs (scripts/paper/pretrain_tiny.sh)
#   HELDOUT_DATA held-out records laid out as DATA (phase1_seq128/, phase2_seq512/): each phase
#               evaluates on them (--eval_input_file; the held-out perplexity of paper Table 6)
#               instead of on its training records
#   EXTRA_FLAGS more run_pretraining.py flags for both phases
# Smoke test of the whole recipe (data from sample_data/sample_text.txt; a few minutes on a CPU):
#   scripts/create_pretraining_data_two_phases.sh sample_data/sample_text.txt /tmp/data
#   DATA=/tmp/data PLATFORM=cpu TRAIN_BATCH_SIZE=8 EVAL_BATCH_SIZE=8 PHASE1_STEPS=2 \
#     PHASE1_WARMUP=1 PHASE2_STEPS=1 PHASE2_WARMUP=1 scripts/paper/pretrain_bert.sh base
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/paper/common.sh
source "$repo/scripts/paper/common.sh"
split_args --dry_run "$@"
size=${positional[0]:?usage: $0 base|large [--dry_run]}

DATA=${DATA:-data/pretraining}
OUT=${OUT:-output/bert_$size}
VOCAB=${VOCAB:-$repo/sample_data/vocab.txt}
BERT_CONFIG=${BERT_CONFIG:-}
PLATFORM=${PLATFORM:-gpu}
TPU_NAME=${TPU_NAME:-}
NUM_GPUS=${NUM_GPUS:-8}
TPU_CORES=${TPU_CORES:-8}
TRAIN_BATCH_SIZE=${TRAIN_BATCH_SIZE:-256}
LEARNING_RATE=${LEARNING_RATE:-1e-4}
PHASE1_STEPS=${PHASE1_STEPS:-900000}
PHASE1_WARMUP=${PHASE1_WARMUP:-10000}
PHASE2_STEPS=${PHASE2_STEPS:-100000}
PHASE2_WARMUP=${PHASE2_WARMUP:-10000}
EVAL_BATCH_SIZE=${EVAL_BATCH_SIZE:-64}
SAVE_CHECKPOINTS_STEPS=${SAVE_CHECKPOINTS_STEPS:-1000}
LOG_STEPS=${LOG_STEPS:-100}
case $size in
  large|L-24_H-1024_A-16) GPU_BATCH_PHASE1=${GPU_BATCH_PHASE1:-8} GPU_BATCH_PHASE2=${GPU_BATCH_PHASE2:-2} ;;
  base|L-12_H-768_A-12) GPU_BATCH_PHASE1=${GPU_BATCH_PHASE1:-32} GPU_BATCH_PHASE2=${GPU_BATCH_PHASE2:-8} ;;
  *) GPU_BATCH_PHASE1=${GPU_BATCH_PHASE1:-$TRAIN_BATCH_SIZE}
     GPU_BATCH_PHASE2=${GPU_BATCH_PHASE2:-$TRAIN_BATCH_SIZE} ;;
esac
TPU_BATCH_PHASE1=${TPU_BATCH_PHASE1:-$GPU_BATCH_PHASE1}
TPU_BATCH_PHASE2=${TPU_BATCH_PHASE2:-$GPU_BATCH_PHASE2}

make_folder "$OUT"
if [[ -z $BERT_CONFIG ]]; then
  BERT_CONFIG=$OUT/bert_config.json
  run python "$repo/scripts/make_bert_config.py" --size="$size" --vocab_file="$VOCAB" \
    --output_file="$BERT_CONFIG"
fi

# The micro-batches summed per update where DEVICES devices of BATCH sequences each hold less
# than TRAIN_BATCH_SIZE: accumulation DEVICES BATCH.
accumulation() {
  local per_update=$(($1 * $2))
  echo $(((TRAIN_BATCH_SIZE + per_update - 1) / per_update))
}

# The flags of the platform, for phase $1 (1 or 2).
platform_flags() {
  case $PLATFORM in
    tpu)
      local batch=TPU_BATCH_PHASE$1
      echo "--use_tpu --tpu_name=${TPU_NAME:?set TPU_NAME}" \
        "${TPU_ZONE:+--tpu_zone=$TPU_ZONE} ${GCP_PROJECT:+--gcp_project=$GCP_PROJECT}" \
        "--gradient_accumulation_steps=$(accumulation "$TPU_CORES" "${!batch}")" ;;
    gpu)
      local batch=GPU_BATCH_PHASE$1
      echo "--distribution_strategy=mirrored --num_gpus=$NUM_GPUS --dtype=mixed_float16" \
        "--use_xla --gradient_accumulation_steps=$(accumulation "$NUM_GPUS" "${!batch}")" ;;
    cpu) echo "" ;;
    *) echo "PLATFORM=$PLATFORM; expected tpu, gpu or cpu" >&2; return 1 ;;
  esac
}

# One phase: NAME SEQ_LENGTH PREDICTIONS STEPS WARMUP [INIT_CHECKPOINT]
phase() {
  local name=$1 seq_length=$2 predictions=$3 steps=$4 warmup=$5 init=${6:-}
  local flags
  flags=$(platform_flags "$name")
  # shellcheck disable=SC2086  # the flag lists are meant to split into words
  run python "$repo/run_pretraining.py" \
    --bert_config_file="$BERT_CONFIG" \
    --input_file="$DATA/phase${name}_seq${seq_length}/part.tfrecord-*" \
    --output_dir="$OUT/phase$name" \
    ${init:+--init_checkpoint="$init"} \
    ${HELDOUT_DATA:+--eval_input_file="$HELDOUT_DATA/phase${name}_seq${seq_length}/part.tfrecord-*"} \
    --vocab_file="$VOCAB" \
    --do_train=True --do_eval=True \
    --max_seq_length="$seq_length" --max_predictions_per_seq="$predictions" \
    --train_batch_size="$TRAIN_BATCH_SIZE" --eval_batch_size="$EVAL_BATCH_SIZE" \
    --learning_rate="$LEARNING_RATE" \
    --num_train_steps="$steps" --num_warmup_steps="$warmup" \
    --save_checkpoints_steps="$SAVE_CHECKPOINTS_STEPS" --log_steps="$LOG_STEPS" \
    $flags ${EXTRA_FLAGS:-}
}

phase 1 128 20 "$PHASE1_STEPS" "$PHASE1_WARMUP"
phase 2 512 80 "$PHASE2_STEPS" "$PHASE2_WARMUP" "$OUT/phase1/pretrained/bert_model.ckpt"
$dry_run || echo "BERT-$size pre-trained: $OUT/phase2/pretrained (eval: $OUT/phase2/eval_results.txt)"
