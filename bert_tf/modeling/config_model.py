"""`ConfigModel`: a functional model that Keras saves as its `BertConfig` and rebuilds from it."""

from __future__ import annotations

import keras

from bert_tf.config import BertConfig


@keras.saving.register_keras_serializable(package="bert_tf")
class ConfigModel(keras.Model):
    """A functional model built from `config` (and `settings`: the constructor's other
    arguments, plain values). Its Keras config is the BertConfig's dict with the settings, so
    `from_config` (and `keras.saving.load_model`) rebuild it by calling the constructor; the
    settings are also attributes.

    Each model class says what the loaders need to know of it (they import no model class):
    its variables by the original's TF1 names (`original_variable_names`), the Hugging Face
    class with its head (`hf_architecture`) and the names there that do not follow the scope
    rule (`hf_names`), and the name that marks its head in an original checkpoint
    (`original_head`)."""

    hf_architecture: str | None = None
    # Original name -> Hugging Face name, where the rule (bert_tf.model_io.hf_format) does not
    # give it: the encoder's embedding tables, and the head's names.
    hf_names: dict[str, str] = {}
    # Whether the Hugging Face class has the pooler (`add_pooling_layer`).
    hf_pooler = True
    # The variable whose presence in an original checkpoint says it holds this model's head
    # (None: a head the original's scripts never wrote, known by task_model.json only).
    original_head: str | None = None
    # A task head's scope in the original's checkpoints (None: no task head).
    head_scope: str | None = None

    def __init__(
        self, config: BertConfig, inputs, outputs, settings: dict | None = None, **kwargs
    ) -> None:
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.config = config
        self._settings = dict(settings or {})
        for name, value in self._settings.items():
            setattr(self, name, value)

    def original_variable_names(self) -> dict[str, keras.Variable]:
        """The name table: original TF1 variable name -> this model's variable."""
        raise NotImplementedError

    def encoder_variable_names(self) -> dict[str, keras.Variable]:
        """The encoder's part of `original_variable_names`."""
        return self.encoder.original_variable_names()

    def head_variables(self) -> list[keras.Variable]:
        """The variables outside the encoder: the heads' (none for an encoder)."""
        encoder = {id(variable) for variable in self.encoder.weights}
        return [variable for variable in self.weights if id(variable) not in encoder]

    @classmethod
    def head_arguments(cls, output_weights_shape: list[int]) -> dict:
        """The constructor's head arguments that the shape of the head's `output_weights` in
        a checkpoint gives (num_labels)."""
        return {}

    def get_config(self) -> dict:
        return {"config": self.config.to_dict(), **self._settings, "name": self.name}

    @classmethod
    def from_pretrained(cls, path, config: BertConfig | None = None, **model_args):
        """This model built from the model directory `path` (bert_config.json, or a Hugging
        Face config.json; or its `ModelSource`) with every weight of its checkpoint;
        `model_args` are the constructor's others (`num_labels=2`; a fine-tuning output_dir
        of this model class gives its own).
        A head the checkpoint lacks is newly initialized (logged); a head of another task's
        class is an error unless `encoder_only=True` (then only the encoder is loaded).
        On `ConfigModel` itself: the class the directory's files name.
        See `bert_tf.model_io.loading.load_model_directory`, which this class hands itself to.

        Example:
            >>> classifier = BertClassifier.from_pretrained("uncased_L-12_H-768_A-12", num_labels=2)
        """
        # Reading TF checkpoints needs TensorFlow: imported here, so that the modeling
        # package itself stays backend-agnostic.
        from bert_tf.model_io.loading import load_model_directory

        return load_model_directory(path, cls, config, **model_args).model

    @classmethod
    def from_config(cls, config: dict):
        config = dict(config)
        return cls(BertConfig.from_dict(config.pop("config")), **config)
