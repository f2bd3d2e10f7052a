"""SavedModels for TF Serving: a fine-tuned classifier with a raw-text signature.

    export_classifier(model, "export/mrpc", vocab_file, do_lower_case=True,
                      max_seq_length=128, labels=["0", "1"])

Signatures:
- `serving_default`: `text_a` (and `text_b` for sentence-pair tasks; an empty string packs
  text_a alone), string [batch]. Tokenized in the graph (`text_graph.InGraphTokenizer`: the
  ids equal FullTokenizer's) and packed as run_classifier packs.
- `serve`: `input_ids`, `input_mask`, `segment_ids`, int32 [batch, seq].
Both return `probabilities` [batch, labels] float32, `label_id` [batch] int32 and `label`
[batch] string (regression: `score` [batch] float32).

The vocab travels as an asset (assets/vocab.txt). Loading the SavedModel needs the
tensorflow-text ops registered: `import tensorflow_text` before `tf.saved_model.load`, and a
TF Serving binary built with them (README "Serving").
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile

import keras
import tensorflow as tf

from bert_tf.text_graph import InGraphTokenizer

logger = logging.getLogger(__name__)


def export_classifier(
    model,
    export_dir: str,
    vocab_file: str,
    do_lower_case: bool,
    max_seq_length: int,
    labels: list[str] | None,
    text_pairs: bool = True,
) -> str:
    """Writes `model` (a BertClassifier) as a SavedModel with both signatures.

    `labels` None: a regression model (one score). `text_pairs`: the raw-text signature
    takes text_b too. The SavedModel is written beside `export_dir` and renamed into place,
    so an existing export is replaced only by a complete one. Returns `export_dir`.
    """
    tokenizer = InGraphTokenizer(vocab_file, do_lower_case=do_lower_case)
    label_names = tf.constant(labels or ["score"])

    def outputs_of(features):
        logits = model(features, training=False)["logits"]  # [N, labels]
        if labels is None:
            return {"score": logits[:, 0]}
        label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {
            "probabilities": tf.nn.softmax(logits, axis=-1),
            "label_id": label_id,
            "label": tf.gather(label_names, label_id),
        }

    def serve(input_ids, input_mask, segment_ids):
        return outputs_of(
            {"input_ids": input_ids, "input_mask": input_mask, "segment_ids": segment_ids}
        )

    def serve_text(text_a, text_b=None):
        ids_a = tokenizer.tokenize(text_a)
        ids_b = tokenizer.tokenize(text_b) if text_b is not None else None
        return outputs_of(tokenizer.pack(ids_a, ids_b, max_seq_length))

    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.track(tokenizer)
    ids_spec = [
        tf.TensorSpec([None, None], tf.int32, name=name)
        for name in ("input_ids", "input_mask", "segment_ids")
    ]
    archive.add_endpoint("serve", serve, input_signature=ids_spec)
    text_spec = [tf.TensorSpec([None], tf.string, name="text_a")]
    if text_pairs:
        text_spec.append(tf.TensorSpec([None], tf.string, name="text_b"))
        archive.add_endpoint("serving_default", serve_text, input_signature=text_spec)
    else:
        archive.add_endpoint(
            "serving_default", lambda text_a: serve_text(text_a), input_signature=text_spec
        )

    return write_archive(
        archive,
        export_dir,
        {
            "do_lower_case": do_lower_case,
            "max_seq_length": max_seq_length,
            "labels": labels,
            "text_pairs": text_pairs,
        },
    )


def write_archive(archive: keras.export.ExportArchive, export_dir: str, metadata: dict) -> str:
    """Writes the SavedModel beside `export_dir` and renames it into place (an existing
    export is replaced only by a complete one), with `metadata` (what a client needs to know)
    in assets.extra/bert_tf.json, where SavedModels keep files TensorFlow does not read.
    Returns `export_dir`."""
    export_dir = os.path.abspath(export_dir)
    parent = os.path.dirname(export_dir)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=os.path.basename(export_dir) + ".tmp-", dir=parent)
    try:
        archive.write_out(staging, verbose=False)
        os.makedirs(os.path.join(staging, "assets.extra"))
        with open(os.path.join(staging, "assets.extra", "bert_tf.json"), "w") as f:
            json.dump(metadata, f, indent=2)
        if os.path.isdir(export_dir):
            shutil.rmtree(export_dir)
        os.replace(staging, export_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    logger.info("SavedModel for serving in %s", export_dir)
    return export_dir
