"""`ConfigModel`: a functional model that Keras saves as its `BertConfig` and rebuilds from it."""

from __future__ import annotations

import keras

from bert_tf.config import BertConfig


class ConfigModel(keras.Model):
    """A functional model built from `config` (and `settings`: the constructor's other
    arguments, plain values). Its Keras config is the BertConfig's dict with the settings, so
    `from_config` (and `keras.saving.load_model`) rebuild it by calling the constructor; the
    settings are also attributes."""

    def __init__(
        self, config: BertConfig, inputs, outputs, settings: dict | None = None, **kwargs
    ) -> None:
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.config = config
        self._settings = dict(settings or {})
        for name, value in self._settings.items():
            setattr(self, name, value)

    def get_config(self) -> dict:
        return {"config": self.config.to_dict(), **self._settings, "name": self.name}

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        return cls(BertConfig.from_dict(config.pop("config")), **config)
