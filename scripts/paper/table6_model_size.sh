#!/usr/bin/env bash
# Paper Table 6 (Sec. 5.2, effect of model size): six shapes (L layers / H hidden / A heads),
# each pre-trained with the same recipe; the held-out masked-LM perplexity and Dev MNLI-m,
# MRPC and SST-2 accuracy, each the mean over random restarts of fine-tuning.
#
# Usage: scripts/paper/table6_model_size.sh base|large|small|long|long40k [OUT] [--quick | --dry_run | --report]
#   base, large: the paper's six shapes 3/768/12, 6/768/3, 6/768/12, 12/768/12, 12/1024/16,
#     24/1024/16, each pre-trained as scripts/paper/pretrain_bert.sh does (1M steps), the
#     perplexity on HELDOUT records (run_pretraining.py --eval_input_file), 5 restarts each.
#   small: a laptop CPU: the shapes scaled to a third of the depth and a sixth of the width:
#     1/128/2, 2/128/1, 2/128/2, 4/128/2, 4/192/3, 8/192/3, 4,000 steps of 32 sequences on the
#     books, the perplexity on 4 held-out books; RTE stands in for MNLI; 3 restarts of RTE and
#     MRPC, 1 of SST-2 (8,000 of its training sentences).
exec "$(dirname "$0")/reproduce_tables.sh" table6 "$@"
