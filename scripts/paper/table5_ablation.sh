#!/usr/bin/env bash
# Paper Table 5 (Sec. 5.1, effect of the pre-training tasks): BERT (masked LM + next sentence),
# No NSP (masked LM alone), LTR & No NSP (a left-to-right LM, as OpenAI GPT: causal attention,
# every next token predicted, fine-tuned left to right and classifying from its last token), and
# "+ BiLSTM" (the LTR model with a randomly initialised BiLSTM on top during fine-tuning).
# Columns: Dev MNLI-m, QNLI, MRPC, SST-2 accuracy and SQuAD 1.1 F1.
#
# Usage: scripts/paper/table5_ablation.sh base|large|small|long|long40k [OUT] [--quick | --dry_run | --report]
#   (OUT defaults to output/paper_<size>; models and runs already there are reused, so the
#   other tables' scripts with the same OUT share the pre-trained models.)
#   base, large: the paper's settings: each model pre-trained as scripts/paper/pretrain_bert.sh
#     does (1M steps of 256 sequences, lr 1e-4, 10k warmup, 90% at 128 tokens then 512;
#     PLATFORM=tpu|gpu), on CORPUS with HELDOUT and VOCAB (see scripts/paper/reproduce.py);
#     fine-tuning at batch 32, 3 epochs, lr 2e-5 (GLUE), SQuAD 1.1 at lr 5e-5. Departure: the
#     paper does not give the BiLSTM's size; ours has hidden_size units per direction.
#   small: a laptop CPU (hours, shared with the other tables): the models are 4/128/2 (the
#     paper's 12/768/12 scaled to a sixth of the width, a third of the depth) pre-trained on
#     86 public-domain books for 4,000 steps of 32 sequences at 128 tokens. MNLI is not here:
#     RTE stands in (mean of 3 restarts); QNLI is built from SQuAD 1.1 Dev; SQuAD trains and
#     evaluates on SQuAD 1.1 Dev split by article. docs/reproduction/table5.md has what it gave.
exec "$(dirname "$0")/reproduce_tables.sh" table5 "$@"
