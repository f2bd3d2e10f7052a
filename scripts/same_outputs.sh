#!/usr/bin/env bash
# Runs the quickstart and the four fine-tuning scripts with fixed seeds at two commits and lists
# the outputs that differ: a refactoring must leave every record, result and prediction
# byte-identical (checkpoint state files and TensorBoard events carry timestamps; SavedModels
# are compared by what they serve).
#
#   bash scripts/same_outputs.sh REV_BEFORE REV_AFTER OUT [DATA]
#
# DATA holds glue/MRPC, squad/dev-v1.1.json and conll2003/ (default ../shared/data); small
# samples of them are made first. Takes about 15 minutes a commit on a laptop CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
before=$1 after=$2 out=$(realpath -m "$3") data=$(realpath "${4:-../shared/data}")
repo=$(pwd)
mkdir -p "$out/data"/{MRPC,squad,conll,swag}
sample="$out/data"
head -81 "$data/glue/MRPC/train.tsv" >"$sample/MRPC/train.tsv"
head -41 "$data/glue/MRPC/dev.tsv" >"$sample/MRPC/dev.tsv"
head -21 "$data/glue/MRPC/test.tsv" >"$sample/MRPC/test.tsv"
python scripts/squad_sample.py --input_file="$data/squad/dev-v1.1.json" \
  --output_file="$sample/squad/train.json" --count=64 --first_answer_only
python scripts/squad_sample.py --input_file="$data/squad/dev-v1.1.json" \
  --output_file="$sample/squad/dev.json" --skip=64 --count=32
for split in train valid test; do
  python scripts/conll_sample.py --input_file="$data/conll2003/$split.txt" \
    --output_file="$sample/conll/$split.txt" --count=40
done
python scripts/swag_sample.py --output_dir="$sample/swag" --train_examples=40 \
  --dev_examples=16 --test_examples=8

run() {  # REV: every output under $out/REV
  local rev=$1 wt="$out/tree_$1" dir="$out/$1"
  [[ -d $wt ]] || git -C "$repo" worktree add -q --detach "$wt" "$rev"
  (
    cd "$wt" && export PYTHONPATH=$wt
    mkdir -p "$dir"
    bash scripts/quickstart.sh "$dir/quickstart" >"$dir/quickstart.log" 2>&1
    python scripts/make_bert_config.py --size=tiny --vocab_file=sample_data/vocab.txt \
      --output_file="$dir/bert_config.json"
    python scripts/make_random_bert.py --bert_config_file="$dir/bert_config.json" \
      --output_dir="$dir/random" --random_seed=3
    local common=(--vocab_file=sample_data/vocab.txt --bert_config_file="$dir/bert_config.json"
      --init_checkpoint="$dir/random/bert_model.ckpt" --train_batch_size=8 --learning_rate=1e-3
      --num_train_epochs=1 --seed=1 --do_train --do_predict)
    python run_classifier.py "${common[@]}" --do_eval --task_name=MRPC \
      --data_dir="$sample/MRPC" --max_seq_length=64 --output_dir="$dir/mrpc" \
      --export_dir="$dir/mrpc_export" >"$dir/mrpc.log" 2>&1
    python run_squad.py "${common[@]}" --train_file="$sample/squad/train.json" \
      --predict_file="$sample/squad/dev.json" --max_seq_length=96 --doc_stride=32 \
      --output_dir="$dir/squad" --export_dir="$dir/squad_export" >"$dir/squad.log" 2>&1
    python run_ner.py "${common[@]}" --do_eval --data_dir="$sample/conll" --max_seq_length=64 \
      --output_dir="$dir/ner" --export_dir="$dir/ner_export" >"$dir/ner.log" 2>&1
    python run_swag.py "${common[@]}" --do_eval --data_dir="$sample/swag" --max_seq_length=48 \
      --output_dir="$dir/swag" --export_dir="$dir/swag_export" >"$dir/swag.log" 2>&1
  )
}
run "$before"
run "$after"

echo "== files that differ (but logs, checkpoint state files, TensorBoard events, SavedModels):"
diff -rq "$out/$before" "$out/$after" | grep -v -E '\.log |/checkpoint |events\.out|_export/' || true
echo "== what each SavedModel serves:"
python - "$out/$before" "$out/$after" <<'PY'
import sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the ops the exports' tokenizers use)

requests = {
    "mrpc": {"text_a": ["The company said profits rose.", "He left."],
             "text_b": ["Profits rose, the company said.", "She stayed home."]},
    "squad": {"question": ["Who won the game?", "What is empty?"],
              "context": ["The Broncos won the game against the Panthers 24 to 10.", ""]},
    "ner": {"text": ["Peter Blackburn said the EU rejects German call .", ""]},
    "swag": {"sent1": ["A man plays guitar."], "sent2": ["He"], "ending0": ["sings."],
             "ending1": ["runs."], "ending2": ["eats."], "ending3": ["sleeps."]},
}
for task, request in requests.items():
    served = []
    for root in sys.argv[1:]:
        signature = tf.saved_model.load(f"{root}/{task}_export").signatures["serving_default"]
        outputs = signature(**{name: tf.constant(value) for name, value in request.items()})
        served.append({name: value.numpy().tolist() for name, value in outputs.items()})
    same = served[0] == served[1]
    print(f"{task}: {'the same' if same else 'differs'}")
    for name in served[0]:
        if served[0][name] != served[1][name]:
            print(f"  {name}: {served[0][name]} -> {served[1][name]}")
PY
