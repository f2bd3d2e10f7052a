"""A multiple-choice SavedModel for TF Serving: SWAG's columns as strings in, the endings'
probabilities out.

    export_swag(model, export_dir, vocab_file, do_lower_case=True, max_seq_length=128)

Signatures:
- `serving_default`: `sent1`, `sent2`, `ending0` ... `ending3`, string [batch] (the columns
  of SWAG's files) -> `probabilities` float32 [batch, 4] and `label_id` int32 [batch] (the
  ending predicted). Each choice is packed as run_swag.py packs it, `[CLS] sent1 [SEP] sent2
  ending_i [SEP]`, tokenized in the graph (`text_graph.InGraphTokenizer`: the ids equal
  FullTokenizer's).
- `serve`: `input_ids`, `input_mask`, `segment_ids` int32 [batch, 4, seq] -> the same.
"""

from __future__ import annotations

import tensorflow as tf

from bert_tf.serving.export import MODEL_INPUTS, check_text_pairs, export_model
from bert_tf.swag.data import NUM_CHOICES
from bert_tf.text.text_graph import InGraphTokenizer

ENDINGS = tuple(f"ending{i}" for i in range(NUM_CHOICES))


def export_swag(
    model, export_dir: str, vocab_file: str, do_lower_case: bool, max_seq_length: int
) -> str:
    """Writes `model` (a BertMultipleChoice) as a SavedModel with both signatures; returns
    `export_dir`."""
    tokenizer = InGraphTokenizer(vocab_file, do_lower_case=do_lower_case)

    def outputs_of(outputs):
        logits = tf.cast(outputs["logits"], tf.float32)  # [N, 4]
        return {
            "probabilities": tf.nn.softmax(logits, axis=-1),
            "label_id": tf.argmax(logits, axis=-1, output_type=tf.int32),
        }

    def serve_text(sent1, sent2, ending0, ending1, ending2, ending3):
        columns = (sent1, sent2, ending0, ending1, ending2, ending3)
        sent1, sent2, *endings = check_text_pairs(
            dict(zip(("sent1", "sent2", *ENDINGS), columns, strict=True)), "one row of SWAG each"
        )
        context = tokenizer.tokenize(sent1)
        packed = [
            tokenizer.pack(
                context, tokenizer.tokenize(tf.strings.join([sent2, ending], " ")), max_seq_length
            )
            for ending in endings
        ]  # 4 x {name: [N, S]}
        features = {name: tf.stack([p[name] for p in packed], axis=1) for name in MODEL_INPUTS}
        return outputs_of(model(features, training=False))  # features: [N, 4, S]

    return export_model(
        model,
        export_dir,
        outputs_of,
        serve_text,
        [tf.TensorSpec([None], tf.string, name=name) for name in ("sent1", "sent2", *ENDINGS)],
        {"do_lower_case": do_lower_case, "max_seq_length": max_seq_length},
        modules=[tokenizer],
        ids_shape=(None, NUM_CHOICES, None),
    )
