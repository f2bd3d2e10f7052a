#!/usr/bin/env bash
# Paper Tables 2 and 3 (SQuAD 1.1 and 2.0, Dev EM/F1), with the paper's settings (Sec. 4.2,
# 4.3): SQuAD 1.1: 3 epochs, lr 5e-5, batch 32; SQuAD 2.0: 2 epochs, lr 5e-5, batch 48, then
# the null threshold tau chosen on Dev (the official evaluation's best_f1_thresh) and the
# predictions made again with it. Sequences of 384, doc_stride 128. Prints eval_results.json.
#
# Usage: scripts/paper/squad_tables.sh 2|3 base|large|small [OUT] [--dry_run]
#   (OUT: at small default output/squad<T>_small; at base and large required, may be gs://)
#   base, large: BERT_DIR (vocab.txt, bert_config.json, bert_model.ckpt) and SQUAD_DIR
#                (train-v1.1.json, dev-v1.1.json, train-v2.0.json, dev-v2.0.json) must be set.
#                Extra run_squad flags in EXTRA_FLAGS (e.g. "--dtype=mixed_float16 --use_xla").
#   small:       minutes on a laptop CPU: BERT-Tiny (a random one unless BERT_DIR is set),
#                trained on 300 questions of the dev set (SQUAD_DIR, default ../shared/data/squad;
#                first answers only) and evaluated on the next 200, sequences of 128. The
#                numbers only show the pipeline runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/paper/common.sh
split_args --dry_run "$@"
table=${positional[0]:-}
table_args "squad$table" "${positional[@]:1}" "${options[@]}"

case $table in
  2) version=v1.1; v2=false; epochs=3.0; batch=32 ;;
  3) version=v2.0; v2=true; epochs=2.0; batch=48 ;;
  *) echo "squad_tables.sh: error: table $table; expected 2 (SQuAD 1.1) or 3 (SQuAD 2.0)" >&2; exit 1 ;;
esac

if [[ $size == small ]]; then
  squad_dir=${SQUAD_DIR:-../shared/data/squad}
  dev=$squad_dir/dev-$version.json
  [[ $version == v2.0 && ! -f $dev ]] && dev=$squad_dir/dev-v2.0-half.json
  bert_dir=${BERT_DIR:-$out/bert}
  random_bert tiny "$bert_dir"
  run python scripts/squad_sample.py --input_file="$dev" --output_file="$out/train.json" \
    --count=300 --first_answer_only
  run python scripts/squad_sample.py --input_file="$dev" --output_file="$out/dev.json" \
    --skip=300 --count=200
  train_file=$out/train.json predict_file=$out/dev.json
  sizes=(--max_seq_length=128 --doc_stride=64 --max_query_length=32 --train_batch_size=16
         --learning_rate=1e-4 --log_steps=10)
  batch=16
else
  : "${BERT_DIR:?set BERT_DIR to the pre-trained model}" "${SQUAD_DIR:?set SQUAD_DIR}"
  bert_dir=$BERT_DIR
  train_file=$SQUAD_DIR/train-$version.json predict_file=$SQUAD_DIR/dev-$version.json
  sizes=(--max_seq_length=384 --doc_stride=128 --train_batch_size="$batch" --learning_rate=5e-5)
fi

common=(--vocab_file="$bert_dir/vocab.txt" --bert_config_file="$bert_dir/bert_config.json"
        --output_dir="$out" --version_2_with_negative="$v2" "${sizes[@]}")
run python run_squad.py "${common[@]}" --init_checkpoint="$bert_dir/bert_model.ckpt" \
  --do_train --train_file="$train_file" --num_train_epochs="$epochs" \
  --do_predict --predict_file="$predict_file" "${extra[@]}"
if [[ $v2 == true ]]; then
  # Tau on Dev, as the paper: the official evaluation's best F1 threshold of null_odds.json.
  if $dry_run; then
    tau="<best_f1_thresh of $out/eval_results.json>"
  else
    tau=$(read_file "$out/eval_results.json" |
      python -c "import json,sys; print(json.load(sys.stdin)['best_f1_thresh'])")
  fi
  run python run_squad.py "${common[@]}" --do_predict --predict_file="$predict_file" \
    --null_score_diff_threshold="$tau" "${extra[@]}"
fi
read_file "$out/eval_results.json"
