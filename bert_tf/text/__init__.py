"""Text into WordPiece ids: the casing decision, and (as the wing fills) the in-graph tokenizer,
vocab building, packing and windows. The original's `bert_tf.tokenization` stays where its
users import it."""
