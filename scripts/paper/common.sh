# Sourced by the table scripts (bash): their arguments, and the `small` runs' default model
# (nothing downloaded).

# table_args NAME SIZE [OUT]: sets `size`, `out` (default output/NAME_SIZE, created) and
# `extra` (the flags in EXTRA_FLAGS, as an array, passed on to every run).
table_args() {
  local name=$1
  size=${2:?usage: $(basename "$0") base|large|small [OUT]}
  out=${3:-output/${name}_$size}
  mkdir -p "$out"
  read -r -a extra <<< "${EXTRA_FLAGS:-}"
}

# random_bert SIZE DIR: a randomly initialised BERT of SIZE (tiny, mini, ...) with the sample
# (uncased) vocabulary in DIR, in the original checkpoint format; kept if DIR already holds one.
random_bert() {
  local size=$1 dir=$2
  [[ -f $dir/bert_model.ckpt.index ]] && return 0
  python scripts/make_bert_config.py --size="$size" --vocab_file=sample_data/vocab.txt \
    --output_file="$dir/bert_config.json"
  cp sample_data/vocab.txt "$dir/vocab.txt"
  python scripts/make_random_bert.py --bert_config_file="$dir/bert_config.json" --output_dir="$dir"
}
