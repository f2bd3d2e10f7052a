"""`BertTaskModel`: what the fine-tuning models share, the encoder with one task head."""

from __future__ import annotations

from bert_tf.config import BertConfig
from bert_tf.modeling.config_model import ConfigModel
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import ClassifierHead

# The original's classifier dropout: keep_prob 0.9, fixed (not the config's dropout).
CLASSIFIER_DROPOUT = 0.1
# A classifier's head in Hugging Face's names (run_classifier's, and ours that reuse it).
CLASSIFIER_HF_NAMES = {
    **BertEncoder.hf_names,
    "output_weights": "classifier.weight",
    "output_bias": "classifier.bias",
}


class BertTaskModel(ConfigModel):
    """A functional model of `encoder` with a task head (its one `ClassifierHead`).
    `settings`: as `ConfigModel`'s."""

    # The head's scope in the original's checkpoints: run_classifier makes `output_weights`
    # and `output_bias` at the top level (and our heads the original lacks, the same way).
    head_scope = ""

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

    def original_variable_names(self) -> dict:
        return {
            **self.encoder_variable_names(),
            f"{self.head_scope}output_weights": self.head.output_weights,
            f"{self.head_scope}output_bias": self.head.output_bias,
        }


def encoder_graph(config: BertConfig, encoder: BertEncoder | None = None):
    """What a task model is built on: the encoder (a new one, or `encoder` with its weights
    shared), its symbolic inputs and its outputs (dicts)."""
    encoder = encoder or BertEncoder(config)
    inputs = dict(encoder.input)
    return encoder, inputs, dict(encoder(inputs))
