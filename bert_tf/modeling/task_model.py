"""`BertTaskModel`: what the fine-tuning models share, the encoder with one task head."""

from __future__ import annotations

from bert_tf.config import BertConfig
from bert_tf.modeling.config_model import ConfigModel
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import ClassifierHead

# The original's classifier dropout: keep_prob 0.9, fixed (not the config's dropout).
CLASSIFIER_DROPOUT = 0.1


class BertTaskModel(ConfigModel):
    """A functional model of `encoder` with a task head (its one `ClassifierHead`, whose layer
    name is its scope in the original's checkpoints: "classifier" for the top-level
    `output_weights`, "squad" for `cls/squad/`). `settings`: as `ConfigModel`'s."""

    def __init__(
        self,
        config: BertConfig,
        encoder: BertEncoder,
        inputs: dict,
        outputs: dict,
        settings: dict,
        **kwargs,
    ) -> None:
        super().__init__(config, inputs, outputs, settings, **kwargs)
        self.encoder = encoder

    @property
    def head(self) -> ClassifierHead:
        return next(layer for layer in self.layers if isinstance(layer, ClassifierHead))


def encoder_graph(config: BertConfig, encoder: BertEncoder | None = None):
    """What a task model is built on: the encoder (a new one, or `encoder` with its weights
    shared), its symbolic inputs and its outputs (dicts)."""
    encoder = encoder or BertEncoder(config)
    inputs = dict(encoder.input)
    return encoder, inputs, dict(encoder(inputs))
