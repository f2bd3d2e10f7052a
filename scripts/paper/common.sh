# Sourced by the table scripts (bash): their arguments, their dry run, files that may be URLs,
# and the `small` runs' default model (nothing downloaded).

# table_args NAME ARG...: SIZE [OUT], and --dry_run in any position (print every command, run
# nothing). Sets `size`, `out` (made; OUT may be a gs:// URL; at base and large it must be
# given, at small it defaults to output/NAME_small), `dry_run` and `extra` (the flags in
# EXTRA_FLAGS, as an array, passed on to every run).
table_args() {
  local name=$1
  shift
  split_args --dry_run "$@"
  size=${positional[0]:-}
  case $size in
    base|large) out=${positional[1]:-} ;;
    small) out=${positional[1]:-output/${name}_small} ;;
    *) fail "size '$size'; expected base, large or small (usage: SIZE [OUT] [--dry_run])" ;;
  esac
  [[ -n $out ]] || fail "give OUT at size $size (the folder of every run; gs:// on a TPU pod)"
  (( ${#positional[@]} <= 2 )) || fail "unexpected ${positional[*]:2}; expected SIZE [OUT]"
  make_folder "$out"
  read -r -a extra <<< "${EXTRA_FLAGS:-}"
}

# split_args ALLOWED ARG...: the ARGs in `positional` and `options`: the options in ALLOWED (a
# space-separated list) in any position, another one an error; `dry_run` true with --dry_run.
split_args() {
  local allowed=" $1 " arg
  shift
  positional=() options=() dry_run=false
  for arg in "$@"; do
    if [[ $arg == -* ]]; then
      [[ $allowed == *" $arg "* ]] || fail "unknown option $arg; expected one of:$allowed"
      options+=("$arg")
      [[ $arg == --dry_run ]] && dry_run=true
    else
      positional+=("$arg")
    fi
  done
  return 0
}

# paper_out SIZE [OUT]: sets `out` for reproduce.py's sizes: OUT, which base and large need
# (a gs:// bucket on a TPU pod), or output/paper_SIZE on a laptop.
paper_out() {
  case $1 in
    base|large) out=${2:-} ;;
    small|long) out=${2:-output/paper_$1} ;;
    long40k) out=${2:-output/paper_long} ;;  # long's runs, shared
    *) fail "size '$1'; expected small, long, long40k, base or large" ;;
  esac
  [[ -n $out ]] || fail "give OUT at size $1 (the folder of every step; gs:// on a TPU pod)"
}

fail() {
  echo "$(basename "$0"): error: $*" >&2
  exit 1
}

# run COMMAND...: runs it, or with --dry_run prints it.
run() {
  if $dry_run; then
    printf '%q ' "$@"
    echo
  else
    "$@"
  fi
}

# make_folder DIR: a local folder made; a URL's folders need no making.
make_folder() {
  [[ $1 == *://* ]] || run mkdir -p "$1"
}

# read_file PATH: the file (local or a URL) on stdout.
read_file() {
  run python -c "import sys; from bert_tf.io.fileio import read_text; sys.stdout.write(read_text(sys.argv[1], 'text'))" "$1"
}

# write_file PATH: stdin written to the file (local or a URL), whole or not at all.
write_file() {
  python -c "import sys; from bert_tf.io.fileio import atomic_write_text; atomic_write_text(sys.argv[1], sys.stdin.read())" "$1"
}

# random_bert SIZE DIR: a randomly initialised BERT of SIZE (tiny, mini, ...) with the sample
# (uncased) vocabulary in DIR, in the original checkpoint format; kept if DIR already holds one.
random_bert() {
  local size=$1 dir=$2
  [[ -f $dir/bert_model.ckpt.index ]] && return 0
  run python scripts/make_bert_config.py --size="$size" --vocab_file=sample_data/vocab.txt \
    --output_file="$dir/bert_config.json"
  run python -c "import sys; from bert_tf.io.filesystem import copy; copy(*sys.argv[1:])" \
    sample_data/vocab.txt "$dir/vocab.txt"
  run python scripts/make_random_bert.py --bert_config_file="$dir/bert_config.json" \
    --output_dir="$dir"
}
