"""Exports keras-hub's BertTextClassifier (random weights) as a raw-text SavedModel, the peer
of `bert_tf.classification.serving.export_classifier` in
`run_classifier.py --mrpc_dev --peer_python=...`.

Run by the peer's python (keras-hub is installed only there, see benchmarks/README.md); the
SavedModel needs only TensorFlow and tensorflow-text to load, so the benchmark times it in the
same process and loop as ours:

    /work/bench-venv/bin/python benchmarks/keras_hub_classifier_export.py \
        --layers=12 --hidden=768 --seq_length=128 --vocab=sample_data/vocab.txt --export_dir=DIR

Signature `serving_default`: text_a, text_b (string [batch]) -> probabilities [batch, 2],
label_id [batch], as ours. keras-hub's preprocessor (BertTokenizer + MultiSegmentPacker)
pads every request to --seq_length: that is how keras-hub serves.
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import keras_hub  # noqa: E402
import tensorflow as tf  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, required=True)
    parser.add_argument("--hidden", type=int, required=True)
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--vocab", required=True, help="WordPiece vocab.txt (ours)")
    parser.add_argument("--export_dir", required=True)
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=args.vocab, lowercase=True)
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor(
        tokenizer, sequence_length=args.seq_length
    )
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(),
        num_layers=args.layers,
        num_heads=max(1, args.hidden // 64),
        hidden_dim=args.hidden,
        intermediate_dim=4 * args.hidden,
        max_sequence_length=512,
    )
    classifier = keras_hub.models.BertTextClassifier(backbone, num_classes=2, preprocessor=None)

    class Serving(tf.Module):
        def __init__(self):
            super().__init__()
            self.preprocessor, self.classifier = preprocessor, classifier

        @tf.function(
            input_signature=[
                tf.TensorSpec([None], tf.string, name="text_a"),
                tf.TensorSpec([None], tf.string, name="text_b"),
            ]
        )
        def serve_text(self, text_a, text_b):
            # x= keeps the pair one input (a bare tuple would be read as (x, y))
            logits = self.classifier(self.preprocessor(x=(text_a, text_b)), training=False)
            return {
                "probabilities": tf.nn.softmax(logits, axis=-1),
                "label_id": tf.argmax(logits, axis=-1, output_type=tf.int32),
            }

    module = Serving()
    tf.saved_model.save(module, args.export_dir, signatures={"serving_default": module.serve_text})
    print(f"keras-hub {keras_hub.__version__} BertTextClassifier -> {args.export_dir}")


if __name__ == "__main__":
    main()
