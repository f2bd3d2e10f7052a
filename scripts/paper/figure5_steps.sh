#!/usr/bin/env bash
# Paper Figure 5 (Appendix C.1, number of training steps): Dev accuracy of the masked-LM model
# and of the left-to-right model fine-tuned from checkpoints along their pre-training
# (run_pretraining.py --keep_checkpoint_every_n_steps keeps them in OUT/pretraining/*/kept/).
#
# Usage: scripts/paper/figure5_steps.sh base|large|small|long|long40k [OUT] [--quick | --dry_run | --report]
#   base, large: checkpoints at 200k, 400k, 600k, 800k steps (phase 1) and the finished model
#     (1M), fine-tuned on MNLI.
#   small: every 800 of the 4,000 steps; MNLI is not here: QNLI built from SQuAD 1.1 Dev stands
#     in (3,912 Dev pairs; RTE's 277 are too few to draw a curve).
#   scripts/paper/plot_reproduction.py draws the figure from OUT/tables/figure5.tsv.
exec "$(dirname "$0")/reproduce_tables.sh" figure5 "$@"
