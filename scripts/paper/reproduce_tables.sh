#!/usr/bin/env bash
# The paper's tables TABLES (comma-separated: table1..table8, figure5) at SIZE by reproduce.py:
# what table5_ablation.sh, table6_model_size.sh, table8_masking.sh, figure5_steps.sh and
# reproduce_all.sh run. Every step whose output exists is skipped, so a rerun resumes.
#
# Usage: scripts/paper/reproduce_tables.sh TABLES base|large|small|long [OUT] [--quick | --dry_run | --report]
set -euo pipefail
cd "$(dirname "$0")/../.."
tables=${1:?usage: reproduce_tables.sh TABLES base|large|small|long [OUT] [--quick|--dry_run|--report]}
size=${2:?usage: $(basename "$0") base|large|small|long [OUT] [--quick|--dry_run|--report]}
out=${3:-output/paper_$size}
shift $(($# < 3 ? $# : 3))
python scripts/paper/reproduce.py --tables="$tables" --size="$size" --output_dir="$out" "$@"
