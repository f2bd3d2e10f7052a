"""Reading and writing models: the package that knows checkpoint files and model directories,
as `bert_tf.modeling` knows the network. It imports no model class: a caller hands in the class
to build (keras-hub's `from_preset` shape), so nothing here depends on the models above it.

- `source`: `ModelSource`, the one reader: a model directory or checkpoint resolved once
  (weights, config, casing, labels, task, class, attention direction), as the loader of its
  format (`formats`: the original's layout, a training output_dir, Hugging Face's).
- `saving`: `save_model_directory`, the one writer of every model directory.
- `task_model`: task_model.json, and the rules that read it (whose head an init checkpoint
  gives; whether a fine-tuning output_dir holds this run's model).
- `loading`: `load_checkpoint` (every variable loaded or named), `load_model_directory`.
- `checkpoints`: the original's TF1 checkpoints by name; training checkpoints (`ckpt-<step>`).
- `hf_format`: Hugging Face's config.json and safetensors, by the same names.
- `convert`: a model directory to the other format (`convert_checkpoint`).
"""

# The format loaders, defined where `ModelSource(path)` can ask them (it imports none itself).
from bert_tf.model_io import formats  # noqa: E402, F401
