"""The classifier's SavedModel for TF Serving, with a raw-text signature.

    export_classifier(model, "export/mrpc", vocab_file, do_lower_case=True,
                      max_seq_length=128, labels=["0", "1"])

Signatures:
- `serving_default`: `text_a` (and `text_b` for sentence-pair tasks, one per text_a; an empty
  string packs text_a alone), string [batch]. Tokenized in the graph
  (`text_graph.InGraphTokenizer`: the ids equal FullTokenizer's) and packed as run_classifier
  packs.
- `serve`: `input_ids`, `input_mask`, `segment_ids`, int32 [batch, seq].
Both return `probabilities` [batch, labels] float32, `label_id` [batch] int32 and `label`
[batch] string (regression: `score` [batch] float32).

The vocab travels as an asset (assets/vocab.txt). Loading the SavedModel needs the
tensorflow-text ops registered: `import tensorflow_text` before `tf.saved_model.load`, and a
TF Serving binary built with them (docs/serving.md).
"""

from __future__ import annotations

import tensorflow as tf

from bert_tf.serving.export import check_text_pairs, export_model
from bert_tf.text.text_graph import InGraphTokenizer


def export_classifier(
    model,
    export_dir: str,
    vocab_file: str,
    do_lower_case: bool,
    max_seq_length: int,
    labels: list[str] | None,
    text_pairs: bool = True,
    pad_to_longest: bool = True,
) -> str:
    """Writes `model` (a BertClassifier) as a SavedModel with both signatures.

    `labels` None: a regression model (one score). `text_pairs`: the raw-text signature
    takes text_b too. `pad_to_longest` False: every request padded to `max_seq_length` (as
    before; for comparisons). The SavedModel is written beside `export_dir` and renamed into place,
    so an existing export is replaced only by a complete one. Returns `export_dir`.
    """
    tokenizer = InGraphTokenizer(vocab_file, do_lower_case=do_lower_case)
    label_names = tf.constant(labels or ["score"])

    def outputs_of(outputs):
        logits = tf.cast(outputs["logits"], tf.float32)  # [N, labels]
        if labels is None:
            return {"score": logits[:, 0]}
        label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {
            "probabilities": tf.nn.softmax(logits, axis=-1),
            "label_id": label_id,
            "label": tf.gather(label_names, label_id),
        }

    def serve_text(text_a, text_b=None):
        if text_b is not None:
            text_a, text_b = check_text_pairs(
                {"text_a": text_a, "text_b": text_b}, "an empty text_b packs its text_a alone"
            )
        ids_a = tokenizer.tokenize(text_a)
        ids_b = tokenizer.tokenize(text_b) if text_b is not None else None
        # By default padded to the longest request: a short pair costs its own length.
        features = tokenizer.pack(ids_a, ids_b, max_seq_length, to_longest=pad_to_longest)
        return outputs_of(model(features, training=False))

    text_signature = [tf.TensorSpec([None], tf.string, name="text_a")]
    if text_pairs:
        text_signature.append(tf.TensorSpec([None], tf.string, name="text_b"))
    return export_model(
        model,
        export_dir,
        outputs_of,
        serve_text if text_pairs else (lambda text_a: serve_text(text_a)),
        text_signature,
        {
            "do_lower_case": do_lower_case,
            "max_seq_length": max_seq_length,
            "labels": labels,
            "text_pairs": text_pairs,
        },
        modules=[tokenizer],
    )
