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
    def from_pretrained(cls, path, config: BertConfig | None = None, **model_args):
        """This model built from the model directory `path` (bert_config.json, or a Hugging
        Face config.json) with its checkpoint's weights; `model_args` are the constructor's
        others (`num_labels=2`; a fine-tuning output_dir of this model class gives its own).
        A head the checkpoint lacks is newly initialized (logged).
        See `bert_tf.pretrained.load_model_directory`.

        Example:
            >>> classifier = BertClassifier.from_pretrained("uncased_L-12_H-768_A-12", num_labels=2)
        """
        # Reading TF checkpoints needs TensorFlow: imported here, so that the modeling
        # package itself stays backend-agnostic.
        from bert_tf.pretrained import load_pretrained

        return load_pretrained(cls, path, config, **model_args)

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        return cls(BertConfig.from_dict(config.pop("config")), **config)
