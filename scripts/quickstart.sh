#!/usr/bin/env bash
# A complete BERT pre-training (paper Sec. 3.1) on a CPU in a few minutes, with nothing to
# download, and proof that the model learned:
#   1. a corpus that every machine with Python has: the standard library's docstrings;
#   2. a WordPiece vocab learned from it;
#   3. BERT-Tiny's shape (L=2, H=128, A=2) with that vocab, randomly initialized, in the original
#      checkpoint format: the "before" model;
#   4. phase-1 pre-training data (128 tokens, 20 masked-LM predictions per sequence);
#   5. masked-LM + next-sentence pre-training from the random model, then an eval;
#   6. fill-in-the-[MASK] with the model before and after, and the accuracies over the run;
#   7. extract_features.py on the pre-trained model: any script of the original reads it.
# Usage: scripts/quickstart.sh [OUT]   (default output/quickstart)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-output/quickstart}
mkdir -p "$out"
# Fewer of TensorFlow's C++ start-up notes between the progress lines: warnings too (2); on a
# machine without an accelerator errors too (3), as bert_tf/cli.py decides for every script.
level=$(python -c "from bert_tf.cli import accelerator_present as a; print(2 if a() else 3)")
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-$level}
# Sentences like the corpus's, one word to guess in each. A tiny model learns the frequent words
# in their places first (the, is, return), the rarer ones (system) much later.
sentences="Return [MASK] number of items in the list.|The file [MASK] not found.|\
[MASK] True if the queue is empty.|This module provides access to the operating [MASK]."

step() { echo; echo "== quickstart: $*"; }

step "1/7 corpus: the Python standard library's docstrings"
python scripts/stdlib_corpus.py --output_file="$out/corpus.txt"

step "2/7 a WordPiece vocab learned from the corpus"
python create_vocab.py --input_file="$out/corpus.txt" --output_file="$out/vocab.txt" \
  --vocab_size=4000 --min_count=3

step "3/7 a random BERT-Tiny with that vocab, in the original checkpoint format"
python scripts/make_bert_config.py --size=tiny --vocab_file="$out/vocab.txt" \
  --output_file="$out/bert_config.json"
python scripts/make_random_bert.py --bert_config_file="$out/bert_config.json" \
  --output_dir="$out/random_bert"
cp "$out/vocab.txt" "$out/random_bert/vocab.txt"

step "4/7 pre-training data: 128 tokens, 20 masked-LM predictions per sequence"
python create_pretraining_data.py --input_file="$out/corpus.txt" \
  --output_file="$out/train.tfrecord" --vocab_file="$out/vocab.txt" --do_lower_case=True \
  --max_seq_length=128 --max_predictions_per_seq=20 --masked_lm_prob=0.15 \
  --random_seed=12345 --dupe_factor=5

step "5/7 masked-LM + next-sentence pre-training from the random model"
python run_pretraining.py --bert_config_file="$out/bert_config.json" \
  --input_file="$out/train.tfrecord" --output_dir="$out/pretraining" \
  --init_checkpoint="$out/random_bert/bert_model.ckpt" --vocab_file="$out/vocab.txt" \
  --do_train=True --do_eval=True --max_seq_length=128 --max_predictions_per_seq=20 \
  --train_batch_size=8 --learning_rate=5e-4 --num_train_steps=3000 --num_warmup_steps=300 \
  --log_steps=250 --seed=12345 2>&1 | tee "$out/pretraining.log"

step "6/7 fill in the [MASK], before and after pre-training"
for model in random_bert pretraining/pretrained; do
  python scripts/fill_mask.py --model_dir="$out/$model" --text="$sentences" --top_k=5 \
    >"$out/fill_mask_${model%%/*}.txt"
done

step "7/7 contextual features from the pre-trained model (extract_features.py)"
python extract_features.py --input_file=sample_data/sample_text.txt \
  --output_file="$out/features.jsonl" --vocab_file="$out/vocab.txt" \
  --bert_config_file="$out/pretraining/pretrained/bert_config.json" \
  --init_checkpoint="$out/pretraining/pretrained/bert_model.ckpt" \
  --layers=-1,-2 --max_seq_length=128 --batch_size=8

# The value of NAME in a "name=value, ..." progress line.
metric() { sed -n "s/.*[ ,]$1=\([0-9.e+-]*\).*/\1/p" <<<"$2"; }
progress=$(grep -E "step [0-9]+/[0-9]+:" "$out/pretraining.log")
first=$(head -n 1 <<<"$progress")
last=$(tail -n 1 <<<"$progress")
step_of() { sed -n "s/.*step \([0-9]*\)\/.*/\1/p" <<<"$1"; }
cat <<EOF

== quickstart: BERT-Tiny pre-trained on the standard library's docstrings
training progress         step $(step_of "$first")  step $(step_of "$last")
  masked_lm_accuracy      $(metric masked_lm_accuracy "$first")  $(metric masked_lm_accuracy "$last")
  next_sentence_accuracy  $(metric next_sentence_accuracy "$first")  $(metric next_sentence_accuracy "$last")
eval ($out/pretraining/eval_results.txt):
$(sed 's/^/  /' "$out/pretraining/eval_results.txt")

fill in the [MASK], before pre-training (random weights):
$(sed 's/^/  /' "$out/fill_mask_random_bert.txt")
after pre-training:
$(sed 's/^/  /' "$out/fill_mask_pretraining.txt")

the pre-trained model, in the original format: $out/pretraining/pretrained
extract_features.py: wrote $(wc -l <"$out/features.jsonl") feature lines to $out/features.jsonl
done in $((SECONDS / 60)) min $((SECONDS % 60)) s
EOF
