#!/usr/bin/env bash
# Paper Table 8 (Appendix C.2, masking procedure): the base model pre-trained with six MASK /
# SAME / RND rates for the masked-LM predictions (80/10/10, 100/0/0, 80/0/20, 80/20/0,
# 0/20/80, 0/0/100: create_pretraining_data.py --masking_rates), then Dev MNLI accuracy, NER
# fine-tuning F1 and NER feature-based F1 (the concatenation of the last four layers into a
# two-layer BiLSTM, as Appendix C.2 says). Ours only: a no-pre-training row (the same shape
# from random weights, the floor) and a "[MASK] ppl" column (each model's held-out masked-LM
# perplexity on the 100/0/0 records: one yardstick for all rows, whose own records differ).
#
# Usage: scripts/paper/table8_masking.sh base|large|small|long|long40k [OUT] [--quick | --dry_run | --report]
#   base, large: the paper's pre-training recipe (scripts/paper/pretrain_bert.sh) once per
#     masking, on CORPUS; NER on CONLL_DIR (a cased vocab: DO_LOWER_CASE=false).
#   small: a laptop CPU: 4/128/2 models, 4,000 steps on the books (cased); RTE stands in for
#     MNLI (3 restarts); CoNLL-2003 from ../shared/data.
exec "$(dirname "$0")/reproduce_tables.sh" table8 "$@"
