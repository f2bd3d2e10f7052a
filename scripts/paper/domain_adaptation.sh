#!/usr/bin/env bash
# Continued pre-training on a domain (ours, issue 49; Gururangan et al. 2020): the base model,
# pre-trained on books, carried on over the SQuAD stand-in's Wikipedia articles for a tenth of
# its steps, with and without the domain's words in its vocab (scripts/extend_vocab.py), beside
# the model as it is and the same steps from random weights: held-out masked-LM perplexity on
# the domain (its Dev articles, held out of the corpus) and QNLI's Dev accuracy.
#
# Usage: scripts/paper/domain_adaptation.sh small|long|long40k [OUT] [--quick | --dry_run | --report]
#   OUT/tables/domain_adaptation.tsv: one row per model (model, steps, domain_ppl, task, dev).
exec "$(dirname "$0")/reproduce_tables.sh" domain "$@"
