#!/usr/bin/env bash
# The paper's tables TABLES (comma-separated: table1..table8, figure5) at SIZE by reproduce.py:
# what table5_ablation.sh, table6_model_size.sh, table8_masking.sh, figure5_steps.sh and
# reproduce_all.sh run. Every step done is skipped, so a rerun resumes.
#
# Usage: scripts/paper/reproduce_tables.sh TABLES small|long|long40k|base|large [OUT] [--quick | --dry_run | --report]
#   (the options in any position; OUT: required at base and large, may be gs://; at small and
#   long default output/paper_<size>)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/paper/common.sh
split_args "--quick --dry_run --report" "$@"
tables=${positional[0]:-}
[[ -n $tables && -n ${positional[1]:-} ]] ||
  fail "usage: reproduce_tables.sh TABLES small|long|long40k|base|large [OUT] [--quick|--dry_run|--report]"
paper_out "${positional[1]}" "${positional[2]:-}"
(( ${#positional[@]} <= 3 )) || fail "unexpected ${positional[*]:3}; expected TABLES SIZE [OUT]"
exec python scripts/paper/reproduce.py --tables="$tables" --size="${positional[1]}" \
  --output_dir="$out" "${options[@]}"
