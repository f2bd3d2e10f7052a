#!/usr/bin/env bash
# Paper Table 7 (CoNLL-2003 NER, Sec. 5.3): fine-tuning (Dev and Test F1), then the
# feature-based rows (Dev F1): a randomly initialised two-layer 768-dimensional BiLSTM and the
# classifier trained on frozen BERT activations, one run per feature. F1 is conlleval's
# entity-level F1. Writes OUT/summary.tsv (approach, dev F1, test F1).
#
# Usage: scripts/paper/ner_table7.sh base|large|small [OUT] [--dry_run]
#   (OUT: at small default output/ner_small; at base and large required, may be gs://)
#   base, large: BERT_DIR (a cased model: vocab.txt, bert_config.json, bert_model.ckpt) and
#                CONLL_DIR (train.txt, valid.txt, test.txt) must be set. The paper gives no
#                NER hyper-parameters beyond Appendix A.3: fine-tuning uses lr 5e-5, batch 32,
#                3 epochs (LR, EPOCHS to change); the BiLSTM lr 1e-3 (FEATURE_LR). Extra
#                run_ner flags in EXTRA_FLAGS (e.g. "--dtype=mixed_float16 --use_xla").
#   small:       minutes on a laptop CPU: BERT-Mini (a random one unless BERT_DIR is set;
#                the feature-based rows need four layers),
#                300 training and 100 dev/test sentences of CONLL_DIR (default
#                ../shared/data/conll2003), sequences of 64, a 64-unit BiLSTM. The numbers
#                only show the pipeline runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/paper/common.sh
table_args ner "$@"
features=(embeddings second_to_last_hidden last_hidden weighted_sum_last_four_hidden
          concat_last_four_hidden weighted_sum_all_layers)

if [[ $size == small ]]; then
  conll_dir=${CONLL_DIR:-../shared/data/conll2003}
  bert_dir=${BERT_DIR:-$out/bert}
  lower=${DO_LOWER_CASE:-true}  # the sample vocab is uncased
  random_bert mini "$bert_dir"
  data_dir=$out/data
  run python scripts/conll_sample.py --input_file="$conll_dir/train.txt" \
    --output_file="$data_dir/train.txt" --count=300
  run python scripts/conll_sample.py --input_file="$conll_dir/valid.txt" \
    --output_file="$data_dir/valid.txt" --count=100
  run python scripts/conll_sample.py --input_file="$conll_dir/test.txt" \
    --output_file="$data_dir/test.txt" --count=100
  sizes=(--max_seq_length=64 --doc_stride=32 --train_batch_size=16 --lstm_units=64
         --log_steps=10)
  lr=${LR:-1e-4} feature_lr=${FEATURE_LR:-1e-3} epochs=${EPOCHS:-2.0}
else
  : "${BERT_DIR:?set BERT_DIR to the pre-trained (cased) model}" "${CONLL_DIR:?set CONLL_DIR}"
  bert_dir=$BERT_DIR data_dir=$CONLL_DIR lower=${DO_LOWER_CASE:-false}
  sizes=(--max_seq_length=128 --train_batch_size=32)
  lr=${LR:-5e-5} feature_lr=${FEATURE_LR:-1e-3} epochs=${EPOCHS:-3.0}
fi

common=(--data_dir="$data_dir" --vocab_file="$bert_dir/vocab.txt"
        --bert_config_file="$bert_dir/bert_config.json"
        --init_checkpoint="$bert_dir/bert_model.ckpt" --do_lower_case="$lower"
        --num_train_epochs="$epochs" --do_train --do_eval "${sizes[@]}")
f1() { read_file "$2" | sed -n "s/^$1_f1 = //p"; }

run python run_ner.py "${common[@]}" --do_predict --learning_rate="$lr" \
  --output_dir="$out/fine_tuning" "${extra[@]}"
for feature in "${features[@]}"; do
  run python run_ner.py "${common[@]}" --feature_based="$feature" --learning_rate="$feature_lr" \
    --output_dir="$out/$feature" "${extra[@]}"
done
$dry_run && exit 0
{
  printf 'approach\tdev_f1\ttest_f1\n'
  printf 'fine_tuning\t%s\t%s\n' "$(f1 eval "$out/fine_tuning/eval_results.txt")" \
    "$(f1 test "$out/fine_tuning/test_results.txt")"
  for feature in "${features[@]}"; do
    printf '%s\t%s\t\n' "$feature" "$(f1 eval "$out/$feature/eval_results.txt")"
  done
} | write_file "$out/summary.tsv"
read_file "$out/summary.tsv"
