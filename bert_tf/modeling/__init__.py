"""The BERT network: embeddings, transformer layers, the encoder, the pre-training heads and
the fine-tuning models. The layers take plain values, which Keras's own `get_config` records;
the models are rebuilt from their `BertConfig` (`ConfigModel`)."""

from bert_tf.modeling.classifier import BertClassifier
from bert_tf.modeling.config_model import ConfigModel
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import ClassifierHead, MaskedLMHead, NextSentenceHead
from bert_tf.modeling.multiple_choice import BertMultipleChoice
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.modeling.span_labeler import BertSpanLabeler
from bert_tf.modeling.token_classifier import BertTokenClassifier

__all__ = [
    "BertClassifier",
    "BertEncoder",
    "BertMultipleChoice",
    "ClassifierHead",
    "ConfigModel",
    "BertPretrainer",
    "BertSpanLabeler",
    "BertTokenClassifier",
    "MaskedLMHead",
    "NextSentenceHead",
]
