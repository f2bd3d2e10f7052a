#!/usr/bin/env bash
# The pre-training learning rate of a laptop size, chosen by short runs on held-out loss: the
# base run's command (reproduce.py's, 4/128/2 masked LM + NSP) at each rate, stopped after
# STOP steps (default 4,000) of its whole schedule, and that checkpoint evaluated on the
# held-out records (80/10/10, and all-[MASK]). How `long`'s rate was chosen
# (docs/reproduction/long_schedule.md).
#
# Usage: scripts/paper/lr_search.sh OUT RATE... [--dry_run]   e.g. output/paper_long 5e-4 1e-3 2e-3
#   OUT: a reproduce.py --size=long output folder whose data/ is written (corpus, vocab, the
#   80/10/10 training and held-out records, the 1.0,0.0,0.0 held-out records).
#   Writes SEARCH/lr<RATE>/ (a run, eval/, eval_mask_only/) and SEARCH/lr_search.tsv, where
#   SEARCH is OUT/lr_search, or OUT/lr_search_<SIZE>_<STEPS>steps_warmup<WARMUP> for another
#   shape or schedule (Table 6's recipe: docs/reproduction/table6.md).
#   SIZE, STEPS, WARMUP, STOP, XLA: the run's shape and schedule, and --use_xla (default
#   L-4_H-128_A-2, 40000, 400, 4000, True). A rerun skips the rates done.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/paper/common.sh
split_args --dry_run "$@"
out=${positional[0]:?usage: lr_search.sh OUT RATE... [--dry_run]}
SIZE=${SIZE:-L-4_H-128_A-2} STEPS=${STEPS:-40000} WARMUP=${WARMUP:-400} STOP=${STOP:-4000}
XLA=${XLA:-True}
search=$out/lr_search
if [[ ${SIZE}_${STEPS}_$WARMUP != L-4_H-128_A-2_40000_400 ]]; then
  search=${search}_${SIZE}_${STEPS}steps_warmup$WARMUP
fi
data=$out/data
records=$data/records/0.8_0.1_0.1
for lr in "${positional[@]:1}"; do
  run=$search/lr$lr
  [[ -e $run/eval_mask_only/eval_results.txt ]] && continue
  make_folder "$run"
  run python scripts/make_bert_config.py --size="$SIZE" --vocab_file="$data/vocab.txt" \
    --output_file="$run/shape.json"
  train=(python run_pretraining.py --bert_config_file="$run/shape.json"
    --input_file="$records/train.tfrecord" --eval_input_file="$records/heldout.tfrecord"
    --output_dir="$run" --vocab_file="$data/vocab.txt" --objective=mlm_nsp
    --keep_checkpoint_every_n_steps=8000 --do_train=True --do_eval=True
    --train_batch_size=32 --eval_batch_size=32 --max_eval_steps=1000 --learning_rate="$lr"
    --num_train_steps="$STEPS" --num_warmup_steps="$WARMUP" --save_checkpoints_steps=1000
    --log_steps=250 --use_xla="$XLA" --seed=1)
  if $dry_run; then
    run "${train[@]}"
    echo "# (stopped once $run/ckpt-$STOP.index is written)"
  elif [[ ! -e $run/ckpt-$STOP.index ]]; then
    "${train[@]}" >> "$run/train.log" 2>&1 &
    pid=$!
    # Stopped once step STOP's checkpoint is written (SIGTERM: it saves the step under way).
    while [[ ! -e $run/ckpt-$STOP.index ]] && kill -0 $pid 2>/dev/null; do sleep 5; done
    kill -TERM $pid 2>/dev/null || true
    wait $pid || true
  fi
  for heldout in 0.8_0.1_0.1 1.0_0.0_0.0; do
    eval_dir=$run/eval; objective=mlm_nsp
    [[ $heldout == 1.0_0.0_0.0 ]] && eval_dir=$run/eval_mask_only && objective=mlm
    evaluate=(python run_pretraining.py --bert_config_file="$run/shape.json"
      --init_checkpoint="$run/ckpt-$STOP" --input_file="$data/records/$heldout/heldout.tfrecord"
      --output_dir="$eval_dir" --do_eval=True --objective=$objective --eval_batch_size=32
      --max_eval_steps=1000)
    if $dry_run; then run "${evaluate[@]}"; else "${evaluate[@]}" > "$eval_dir.log" 2>&1; fi
  done
done
$dry_run && exit 0
# The table: one row per rate searched.
value() { sed -n "s/^$2 = //p" "$1/eval_results.txt"; }
{
  printf 'lr\tstep\tmasked_lm_loss\tmasked_lm_perplexity\tmasked_lm_accuracy\tnext_sentence_accuracy'
  printf '\tmask_only_masked_lm_perplexity\tmask_only_masked_lm_accuracy\n'
  for run in "$search"/lr*/; do
    [[ -e $run/eval_mask_only/eval_results.txt ]] || continue
    lr=$(basename "$run"); lr=${lr#lr}
    printf '%s\t%s' "$lr" "$STOP"
    for key in masked_lm_loss masked_lm_perplexity masked_lm_accuracy next_sentence_accuracy; do
      printf '\t%.4g' "$(value "$run/eval" $key)"
    done
    for key in masked_lm_perplexity masked_lm_accuracy; do
      printf '\t%.4g' "$(value "$run/eval_mask_only" $key)"
    done
    printf '\n'
  done
} > "$search/lr_search.tsv"
cat "$search/lr_search.tsv"
