"""Sentence(-pair) classification as the paper fine-tunes BERT on GLUE (run_classifier.py)."""
