"""`BertPreprocessor`: raw text in, the models' inputs out, as a Keras layer.

It runs `text_graph.InGraphTokenizer` (FullTokenizer as tensorflow-text ops: the same ids) and
packs `[CLS] A [SEP] (B [SEP])` as run_classifier does, so it works in `tf.data` pipelines and
inside Keras models that take strings. TensorFlow backend only (the tokenizer is TF ops).

    preprocessor = BertPreprocessor.from_pretrained("uncased_L-12_H-768_A-12")
    inputs = preprocessor(["a sentence", "another one"])        # single sentences
    inputs = preprocessor((["the premise"], ["the hypothesis"]))  # pairs: (text_a, text_b)
    inputs["input_ids"]  # [2, 128] int32, and input_mask, segment_ids
"""

from __future__ import annotations

import os

import keras
import tensorflow as tf

from bert_tf.io import filesystem
from bert_tf.model_io.source import ModelSource
from bert_tf.serving.export import MODEL_INPUTS
from bert_tf.text.text_graph import InGraphTokenizer

VOCAB_ASSET = "vocab.txt"


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPreprocessor(keras.layers.Layer):
    """Strings [B], or a pair `(text_a, text_b)` of strings [B] each (an empty text_b packs
    text_a alone) -> `input_ids`, `input_mask`, `segment_ids` [B, max_seq_length] int32:
    FullTokenizer's WordPiece ids, truncated and packed as the original's
    `convert_single_example`.

    The vocab goes into `.keras` files as an asset (`save_assets`), so a saved model with this
    layer loads anywhere; it is not part of `get_config`.

    Args:
        vocab_file: the model's vocab.txt (None: set by `load_assets` when loading).
        max_seq_length: the packed length (at most the config's max_position_embeddings).
        do_lower_case: as FullTokenizer's; True for uncased models.
    """

    def __init__(
        self,
        vocab_file: str | os.PathLike | None = None,
        max_seq_length: int = 128,
        do_lower_case: bool = True,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.max_seq_length = max_seq_length
        self.do_lower_case = do_lower_case
        self.tokenizer = None
        if vocab_file is not None:
            self.tokenizer = InGraphTokenizer(os.fspath(vocab_file), do_lower_case)
        self.built = True

    @classmethod
    def from_pretrained(
        cls, path: str | os.PathLike, max_seq_length: int = 128, do_lower_case: bool | None = None
    ) -> BertPreprocessor:
        """The preprocessor of the model directory `path` (its vocab.txt), cased as the loading
        rules say (`ModelSource.do_lower_case`; `do_lower_case` None: ask the model)."""
        source = ModelSource(path)
        do_lower_case = source.do_lower_case(do_lower_case)
        vocab_file = os.path.join(source.directory, VOCAB_ASSET)
        return cls(vocab_file, max_seq_length=max_seq_length, do_lower_case=do_lower_case)

    # Plain TensorFlow ops, no Python control flow on tensors: AutoGraph has nothing to
    # convert, and converting tensorflow-text's Python takes seconds at every trace.
    @tf.autograph.experimental.do_not_convert
    def __call__(self, inputs, **kwargs) -> dict:
        # Keras takes only tensors as a layer's inputs: lists and arrays of strings become ones.
        inputs = tuple(map(_tensor, inputs)) if _is_pair(inputs) else _tensor(inputs)
        return super().__call__(inputs, **kwargs)

    @tf.autograph.experimental.do_not_convert
    def call(self, inputs) -> dict:
        if self.tokenizer is None:
            raise ValueError(f"{self.name} has no vocab: build it with vocab_file=...")
        text_a, text_b = inputs if _is_pair(inputs) else (inputs, None)
        ids_a = self.tokenizer.tokenize(_strings(text_a))  # [B, (tokens)]
        ids_b = None if text_b is None else self.tokenizer.tokenize(_strings(text_b))
        return self.tokenizer.pack(ids_a, ids_b, self.max_seq_length)

    def compute_output_spec(self, inputs) -> dict:
        batch = (inputs[0] if _is_pair(inputs) else inputs).shape[0]
        return {
            name: keras.KerasTensor((batch, self.max_seq_length), dtype="int32", name=name)
            for name in MODEL_INPUTS
        }

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "max_seq_length": self.max_seq_length,
            "do_lower_case": self.do_lower_case,
        }

    def save_assets(self, dir_path: str) -> None:
        vocab = self.tokenizer.vocab_asset.asset_path.numpy().decode("utf-8")
        filesystem.copy(vocab, os.path.join(dir_path, VOCAB_ASSET))

    def load_assets(self, dir_path: str) -> None:
        self.tokenizer = InGraphTokenizer(os.path.join(dir_path, VOCAB_ASSET), self.do_lower_case)


def _is_pair(inputs) -> bool:
    """A pair is a tuple or list of two batches; a list of strings is one batch."""
    return (
        isinstance(inputs, (tuple, list))
        and len(inputs) == 2
        and not isinstance(inputs[0], (str, bytes))
    )


def _tensor(texts):
    """`texts` (strings: a list, an array, a tensor, a Keras input) as a tensor."""
    if isinstance(texts, (tf.Tensor, keras.KerasTensor)):
        return texts
    return tf.convert_to_tensor(texts, tf.string)


def _strings(texts):
    """A [B] or [B, 1] string tensor as [B] (Keras gives string inputs either shape)."""
    return tf.reshape(texts, [-1])
