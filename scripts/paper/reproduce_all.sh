#!/usr/bin/env bash
# Every table of the paper (1-8) and Figure 5 at one size, sharing the pre-trained models:
# the base model first (Tables 5, 1-4, 7 and Figure 5), then the masking variants (Table 8)
# and the other sizes (Table 6). Then the plots (scripts/paper/plot_reproduction.py) into
# OUT/figures when matplotlib is installed (pip install -e ".[plots]").
#
# Usage: scripts/paper/reproduce_all.sh small|long|long40k|base|large [OUT] [--quick | --dry_run | --report]
#   (the options in any position; OUT: required at base and large, may be gs://; at small and
#   long default output/paper_<size>)
#   small: a laptop CPU, about 13 hours on 2 cores (docs/REPRODUCTION.md); --quick: minutes;
#   long: small's models pre-trained ten times longer, the ones that learn (about 30 hours);
#   --report: run nothing, write the tables (and plots) from the steps done so far.
#   base, large: see scripts/paper/reproduce.py and each table's script for the settings.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/paper/common.sh
split_args "--quick --dry_run --report" "$@"
paper_out "${positional[0]:-}" "${positional[1]:-}"
scripts/paper/reproduce_tables.sh table5,table1,table2,table3,table4,table7,figure5,table8,table6 "$@"
if ! $dry_run && python -c "import matplotlib" 2>/dev/null; then
  python scripts/paper/plot_reproduction.py --output_dir="$out" --figures_dir="$out/figures"
fi
