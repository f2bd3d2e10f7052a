# Sourced by the table scripts (bash): the `small` runs' default model, nothing downloaded.
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
