"""`BertTaskModel`: what the fine-tuning models share, the encoder with one task head."""

from __future__ import annotations

import keras

from bert_tf.config import BertConfig
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import ClassifierHead

# The original's classifier dropout: keep_prob 0.9, fixed (not the config's dropout).
CLASSIFIER_DROPOUT = 0.1


class BertTaskModel(keras.Model):
    """A functional model of `encoder` with a task head (its one `ClassifierHead`, whose layer
    name is its scope in the original's checkpoints: "classifier" for the top-level
    `output_weights`, "squad" for `cls/squad/`).

    Subclasses build the graph and pass `settings`, the constructor's arguments beyond the
    config: they become attributes and, with the config, `get_config()`.
    """

    def __init__(
        self,
        config: BertConfig,
        encoder: BertEncoder,
        inputs: dict,
        outputs: dict,
        settings: dict,
        **kwargs,
    ) -> None:
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.config = config
        self.encoder = encoder
        self._settings = dict(settings)
        for name, value in settings.items():
            setattr(self, name, value)

    @property
    def head(self) -> ClassifierHead:
        return next(layer for layer in self.layers if isinstance(layer, ClassifierHead))

    def get_config(self) -> dict:
        return {"config": self.config.to_dict(), **self._settings, "name": self.name}

    @classmethod
    def from_config(cls, config: dict) -> BertTaskModel:
        config = dict(config)
        return cls(BertConfig.from_dict(config.pop("config")), **config)
