"""bert_tf: a faithful TensorFlow 2 / Keras 3 reproduction of BERT (Devlin et al., 2018).

Modules: `tokenization` (WordPiece, as the original), `config` (bert_config.json), `modeling`
(the Keras encoder and heads), `checkpoints` (Google's original TF1 checkpoints).
"""

__version__ = "0.1.0"
