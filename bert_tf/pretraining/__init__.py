"""Pre-training data as the original's create_pretraining_data.py makes it (paper Sec. 3.1).

`documents` reads and tokenizes the corpus, `instances` cuts documents into next-sentence pairs,
`masking` chooses the masked-LM predictions, `records` writes and reads the TFRecord features.
"""
