#!/usr/bin/env bash
# Paper Table 1 (GLUE): fine-tunes every GLUE task with the paper's search (Sec. 4.1): batch
# 32, 3 epochs, the best of lr {5e-5, 4e-5, 3e-5, 2e-5} on Dev; BERT-LARGE also with random
# restarts on the small data sets (here 5 seeds for CoLA, STS-B, MRPC and RTE; 1 elsewhere).
# Writes OUT/summary.tsv (mean, std and best per task and learning rate) via glue_search.py.
#
# Usage: scripts/paper/glue_table1.sh base|large|small [OUT] [--dry_run]
#   (OUT: at small default output/glue_small; at base and large required, may be gs://)
#   base, large: BERT_DIR (vocab.txt, bert_config.json, bert_model.ckpt, e.g. Google's
#                uncased_L-12_H-768_A-12) and GLUE_DIR (one folder per task, as the GLUE
#                download script writes them) must be set. Extra run_classifier flags in
#                EXTRA_FLAGS (for example "--dtype=mixed_float16 --use_xla").
#   small:       minutes on a laptop CPU: BERT-Tiny (a random one unless BERT_DIR is set, e.g.
#                the quickstart's output/quickstart/pretrained), 200 training and 100 dev
#                examples of MRPC, RTE, STS-B and SST-2 (GLUE_DIR, default ../shared/data/glue),
#                sequences of 64 tokens, 2 restarts. The numbers only show the search runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/paper/common.sh
table_args glue "$@"

if [[ $size == small ]]; then
  glue_dir=${GLUE_DIR:-../shared/data/glue}
  bert_dir=${BERT_DIR:-$out/bert}
  random_bert tiny "$bert_dir"
  run python scripts/paper/glue_search.py --tasks=MRPC,RTE,STS-B,SST-2 --glue_dir="$glue_dir" \
    --bert_dir="$bert_dir" --output_dir="$out" --restarts=2 --max_seq_length=64 \
    --max_train_examples=200 --max_eval_examples=100 -- --log_steps=10 "${extra[@]}"
  exit 0
fi

: "${BERT_DIR:?set BERT_DIR to the pre-trained model}" "${GLUE_DIR:?set GLUE_DIR}"
restarts_small=1
[[ $size == large ]] && restarts_small=5
run python scripts/paper/glue_search.py --tasks=MNLI,QQP,QNLI,SST-2,CoLA,STS-B,MRPC,RTE \
  --glue_dir="$GLUE_DIR" --bert_dir="$BERT_DIR" --output_dir="$out" --restarts=1 \
  --small_task_restarts="$restarts_small" -- "${extra[@]}"
