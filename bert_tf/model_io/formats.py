"""The loaders of the three formats a model directory comes in, each a `ModelSource` that
answers its format's questions (which paths are its own, config, labels, class, tensors)
itself: the only place that tells the formats apart. `ModelSource(path)` asks each in turn
(`HfFiles`, `TrainingFiles`, then `OriginalFiles`, which takes any other path).

- `OriginalFiles`: the original's TF1 layout, variables by the original's names (a released
  model, run_pretraining.py's `pretrained/`, a model converted from Hugging Face's).
- `TrainingFiles`: a bert_tf training checkpoint (`ckpt-<step>`), by each variable's Keras
  path in its object graph (a pre-training or fine-tuning output_dir).
- `HfFiles`: Hugging Face's config.json and safetensors.
"""

from __future__ import annotations

import functools
import os
import re

import keras

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.model_io import checkpoints, hf_format
from bert_tf.model_io.checkpoints import UNREADABLE_CHECKPOINT, listing, variable_names
from bert_tf.model_io.source import ModelSource, Tensors, class_of, config_file

# Training state in original checkpoints that is not part of the model: Adam slots
# (`<var>/adam_m`, `<var>/adam_v`, or Keras-style `Adam`), the step and loss-scale counters.
_NOT_MODEL = re.compile(
    r"(/adam_[mv]$|/Adam(_\d+)?$|^AdamWeightDecayOptimizer|^global_step$|"
    r"^(current_loss_scale|good_steps|loss_scale)$)"
)


class OriginalFiles(ModelSource):
    """The original's layout: bert_config.json, bert_model.ckpt by the original's names. Any
    path the other loaders do not claim: a folder without weights (a config and a vocab: a
    source of casing) or with a damaged checkpoint too, whose `weights` and `tensors` then
    say what is wrong."""

    @classmethod
    def claims(cls, path: str) -> bool:
        return True

    @functools.cached_property
    def reader(self):
        return checkpoints.checkpoint_reader(self.weights)

    def tensors(self, model: keras.Model) -> Tensors:
        shapes = self.reader.get_variable_to_shape_map()
        skipped = sorted(name for name in shapes if _NOT_MODEL.search(name))
        kept = {name: shape for name, shape in shapes.items() if name not in skipped}
        return Tensors(self.weights, kept, self.reader.get_tensor, skipped=skipped)

    def _saved_class(self, family: list[type]) -> tuple[type, str, list[int]]:
        shapes = self.reader.get_variable_to_shape_map()
        found = [c for c in family if c.original_head in shapes]
        # The original's heads first: a top-level output_weights is its run_classifier's.
        found.sort(key=lambda c: c.original_head is None)
        if not found:
            return class_of(family, "BertModel"), "", []
        return found[0], self.weights, list(shapes.get(found[0].original_head, []))


class TrainingFiles(OriginalFiles):
    """A bert_tf training output_dir: `ckpt-<step>` by Keras paths, bert_config.json beside
    (a fine-tuning one's also task_model.json, vocab.txt, labels.txt)."""

    @classmethod
    def claims(cls, path: str) -> bool:
        """By the checkpoint's own evidence: an object graph."""
        try:
            reader = checkpoints.checkpoint_reader(checkpoints.resolve_checkpoint_path(path))
        except (InputError, *UNREADABLE_CHECKPOINT):
            return False
        return reader.has_tensor(checkpoints.OBJECT_GRAPH)

    def tensors(self, model: keras.Model) -> Tensors:
        # By each variable's Keras path, not its place in the object graph: any run's
        # checkpoint gives any model its encoder.
        reader, prefix = self.reader, self.weights
        shapes, keys = reader.get_variable_to_shape_map(), checkpoints.object_graph_keys(reader)
        variables = variable_names(model)
        table = {name: keys[v.path] for name, v in variables.items() if v.path in keys}
        encoder = model.encoder_variable_names()
        if not set(table) & set(encoder):
            paths = [variable.path for variable in encoder.values()]
            raise InputError(
                f"{prefix}: a training checkpoint with no BERT encoder in it (none of "
                f"{listing(paths, 2)}); expected one written by run_pretraining.py or a "
                "fine-tuning script of bert_tf"
            )
        return Tensors(
            prefix,
            {name: shapes[key] for name, key in table.items()},
            lambda name: reader.get_tensor(table[name]),
            own_names={name: variable.path for name, variable in variables.items()},
        )

    def _saved_class(self, family: list[type]) -> tuple[type, str, list[int]]:
        # run_pretraining.py's (a fine-tuning run's has a task_model.json, read first).
        return class_of(family, "BertForPreTraining"), self.weights, []


class HfFiles(ModelSource):
    """Hugging Face's layout: config.json, model.safetensors (or its shards), vocab.txt,
    tokenizer_config.json."""

    converts_to_original = True

    @classmethod
    def claims(cls, path: str) -> bool:
        """A folder with config.json and no bert_config.json."""
        return checkpoints.checkpoint_prefix(path) is None and hf_format.is_hf_directory(path)

    @functools.cached_property
    def weights(self) -> str:
        return self.directory

    @functools.cached_property
    def hf_weights(self) -> hf_format.HfWeights:
        return hf_format.HfWeights(self.directory)

    @functools.cached_property
    def hf_values(self) -> dict:
        return hf_format.read_hf_values(self.directory)

    @functools.cached_property
    def config(self) -> BertConfig:
        if os.path.basename(config_file(self.directory) or "") != hf_format.CONFIG_FILE:
            return super().config
        return hf_format.read_hf_config(self.directory)

    @functools.cached_property
    def labels(self) -> list[str] | None:
        """labels.txt's, else config.json's named id2label (not transformers' LABEL_<i>)."""
        own = super().labels
        if own is not None:
            return own
        id2label = self.hf_values.get("id2label") or {}
        labels = [id2label[key] for key in sorted(id2label, key=int)]
        return labels if labels and labels != [f"LABEL_{i}" for i in range(len(labels))] else None

    def tensors(self, model: keras.Model) -> Tensors:
        weights = self.hf_weights
        table = hf_format.original_names(model, weights.shapes)
        optional = hf_format.POOLER_NAMES  # Hugging Face's token, span, masked-LM classes lack it
        if "BertForMaskedLM" in (self.hf_values.get("architectures") or []):
            optional += hf_format.NEXT_SENTENCE_NAMES  # a masked LM without the NSP head

        def read(original: str):
            name, transposed = table[original]
            return weights.read(name).T if transposed else weights.read(name)

        shapes = {
            original: weights.shapes[name][::-1] if transposed else weights.shapes[name]
            for original, (name, transposed) in table.items()
        }
        # Each name as the file has it, or, for one it lacks, as the model's class would.
        own = {original: name for original, (name, _) in hf_format.hf_names(model).items()}
        own.update({original: name for original, (name, _) in table.items()})
        return Tensors(self.weights, shapes, read, optional, own_names=own)

    def _saved_class(self, family: list[type]) -> tuple[type, str, list[int]]:
        shapes = self.hf_weights.shapes
        shapes = shapes | {name.removeprefix("bert."): shape for name, shape in shapes.items()}
        archs = self.hf_values.get("architectures") or []
        found = [c for c in family if c.hf_architecture and c.hf_architecture in archs]
        said = os.path.join(self.directory, hf_format.CONFIG_FILE) if found else self.weights
        if not found:  # by its head's names; the same names with a pooler or without
            pooler = "pooler.dense.weight" in shapes  # (a sequence or a token classifier)
            found = [c for c in family if set(_head_hf_names(c)) & set(shapes)]
            found.sort(key=lambda c: (c.hf_pooler != pooler, c.original_head is None))
        if not found:
            return class_of(family, "BertModel"), "", []
        head = next((n for n in _head_hf_names(found[0]) if n.endswith(".weight")), "")
        return found[0], said, list(shapes.get(head, []))


def _head_hf_names(cls: type) -> list[str]:
    return [hf for original, hf in cls.hf_names.items() if not original.startswith("bert/")]
