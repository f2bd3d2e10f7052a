"""extract_features.py's library: the original's feature extraction (each layer's output per
token, as JSON lines), from the text's examples to the written features."""
