"""scripts/paper/reproduce.py's parts: sizes, steps, data, pre-training, fine-tuning, tables."""
