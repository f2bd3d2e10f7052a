"""The BERT network: embeddings, transformer layers, the encoder and the pre-training heads."""

from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import (
    MaskedLMHead,
    NextSentenceHead,
    masked_lm_loss,
    next_sentence_loss,
)
from bert_tf.modeling.pretrainer import BertPretrainer, pretraining_losses

__all__ = [
    "BertEncoder",
    "BertPretrainer",
    "MaskedLMHead",
    "NextSentenceHead",
    "masked_lm_loss",
    "next_sentence_loss",
    "pretraining_losses",
]
