"""Fine-tuning and prediction throughput of the GLUE classifier, printed as a table.

For BERT-Tiny (L=2, H=128) and BERT-Base (L=12, H=768) at sequence length 128:
- fine-tuning examples/s: `Trainer.run_steps` of `run_classifier.py` (AdamWeightDecay, clip,
  dropout), batch 32;
- prediction examples/s in process (`Trainer.predict`'s model call, no dropout) and through the
  exported SavedModel's `serve` (ids) and `serving_default` (raw text, tokenized in the graph)
  signatures, at batch 1 and 32.

    python benchmarks/run_classifier.py                 # tiny and base, float32
    python benchmarks/run_classifier.py --sizes=tiny --dtype=mixed_bfloat16
    python benchmarks/run_classifier.py --sizes=base --mrpc_dev=../shared/data/glue/MRPC/dev.tsv

With --mrpc_dev, also the latency of one request (batch 1, an MRPC Dev pair each) through the
raw-text signature, median and 90th percentile in ms, for three exports of one model taking
turns on each pair: float32 padded to --seq_length (as before), float32 padded to the request,
bfloat16 padded to the request (`--export_dtype`), and with --peer_python (a python with
keras-hub, benchmarks/README.md) keras-hub's BertTextClassifier of the same size exported with
its preprocessor as a raw-text SavedModel; each median also as a multiple of ours (float32,
padded to the request). And the share of pairs whose bfloat16 label equals float32's (random
weights: a weak test of agreement, near-ties are common).

Each number is the best of --repeats timed windows after a warm-up in one process (timings
between fresh processes vary more on shared machines; see benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras
import numpy as np
import tensorflow as tf
from timing import best_rate  # benchmarks/timing.py

from bert_tf.classification.objective import Classification
from bert_tf.classification.serving import export_classifier
from bert_tf.config import BertConfig
from bert_tf.optimization import create_optimizer
from bert_tf.serving.export import model_in_dtype
from bert_tf.training.loop import Trainer

SIZES = {"tiny": (2, 128), "mini": (4, 256), "small": (4, 512), "base": (12, 768)}
VOCAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sample_data", "vocab.txt")
SENTENCE = "the quick brown fox jumps over the lazy dog near the river bank " * 6


def random_batch(rng: np.random.Generator, n: int, seq_length: int) -> dict:
    """A batch of n classifier records of random tokens."""
    return {
        "input_ids": rng.integers(1000, 30000, (n, seq_length)).astype(np.int32),
        "input_mask": np.ones((n, seq_length), np.int32),
        "segment_ids": np.zeros((n, seq_length), np.int32),
        "label_ids": rng.integers(0, 2, n).astype(np.int32),
        "is_real_example": np.ones(n, np.int32),
    }


def measure(size: str, dtype: str, seq_length: int, repeats: int, seconds: float) -> list[tuple]:
    keras.config.set_dtype_policy(dtype)
    layers, hidden = SIZES[size]
    config = BertConfig(
        vocab_size=30522,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 64),
        intermediate_size=4 * hidden,
        type_vocab_size=2,
    )
    objective = Classification(2)
    model = objective.build_model(config)
    trainer = Trainer(
        tf.distribute.get_strategy(),
        model,
        objective,
        create_optimizer(2e-5, 1000, 100),
        checkpoint_dir=None,
    )
    rng = np.random.default_rng(0)
    rows = []
    train_batch = random_batch(rng, 32, seq_length)
    iterator = trainer.distribute(tf.data.Dataset.from_tensors(train_batch).repeat())
    steps = 5 if size != "base" else 1
    rate = best_rate(lambda: trainer.run_steps(iterator, steps), 32 * steps, seconds, repeats)
    rows.append((size, dtype, "fine-tune (in process)", 32, rate))

    predict = tf.function(lambda features: model(features, training=False)["logits"])
    export_dir = tempfile.mkdtemp(prefix="bench_export_")
    export_classifier(model, export_dir, VOCAB, True, seq_length, ["0", "1"])
    saved = tf.saved_model.load(export_dir)
    serve, serve_text = saved.signatures["serve"], saved.signatures["serving_default"]
    for n in (1, 32):
        features = {
            k: tf.constant(v)
            for k, v in random_batch(rng, n, seq_length).items()
            if k.endswith("_ids") or k == "input_mask"
        }  # noqa: E501
        features.pop("label_ids")
        rows.append(
            (size, dtype, "predict (in process)", n,
             best_rate(lambda f=features: predict(f).numpy(), n, seconds, repeats))
        )  # fmt: skip
        rows.append(
            (size, dtype, "predict (SavedModel, ids)", n,
             best_rate(lambda f=features: serve(**f)["probabilities"].numpy(), n, seconds, repeats))
        )  # fmt: skip
        text = tf.constant([SENTENCE] * n)
        rows.append(
            (size, dtype, "predict (SavedModel, raw text)", n,
             best_rate(lambda t=text: serve_text(text_a=t, text_b=t)["probabilities"].numpy(), n,
                       seconds, repeats))
        )  # fmt: skip
    return rows


def mrpc_pairs(path: str) -> list[tuple[str, str]]:
    """(sentence 1, sentence 2) of an MRPC .tsv (GLUE's columns)."""
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    return [(row[3], row[4]) for row in rows]


PEER = "keras-hub, float32"  # BertTextClassifier; its preprocessor pads to --seq_length

# The raw-text exports compared per request: (name, export dtype, padding to the longest).
EXPORTS = (
    ("float32, max length", "float32", False),  # every request padded to --seq_length
    ("float32", "float32", True),
    ("bfloat16", "bfloat16", True),
)


def keras_hub_export(python: str, size: str, seq_length: int) -> str:
    """keras-hub's BertTextClassifier of `size` (random weights) as a raw-text SavedModel,
    exported by the peer's python (benchmarks/keras_hub_classifier_export.py); its directory."""
    layers, hidden = SIZES[size]
    export_dir = os.path.join(tempfile.mkdtemp(prefix="bench_keras_hub_"), "export")
    script = os.path.join(os.path.dirname(__file__), "keras_hub_classifier_export.py")
    subprocess.run(
        [python, script, f"--layers={layers}", f"--hidden={hidden}", f"--seq_length={seq_length}",
         f"--vocab={VOCAB}", f"--export_dir={export_dir}"],
        check=True,
    )  # fmt: skip
    return export_dir


def request_latencies(
    size: str, seq_length: int, pairs: list, peer_python: str | None
) -> tuple[list, float]:
    """Per export of EXPORTS (and keras-hub's, with `peer_python`): median and 90th-percentile
    ms of one raw-text request per pair (the exports take turns on each pair, after a warm-up
    pass over 20 pairs), and the share of pairs whose bfloat16 label equals float32's."""
    layers, hidden = SIZES[size]
    config = BertConfig(
        vocab_size=30522, hidden_size=hidden, num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 64), intermediate_size=4 * hidden,
    )  # fmt: skip
    keras.config.set_dtype_policy("float32")
    keras.utils.set_random_seed(0)
    model = Classification(2).build_model(config)
    signatures = {}
    for name, dtype, to_longest in EXPORTS:
        export_dir = tempfile.mkdtemp(prefix="bench_export_")
        export_classifier(
            model_in_dtype(model, dtype), export_dir, VOCAB, True, seq_length, ["0", "1"],
            pad_to_longest=to_longest,
        )  # fmt: skip
        signatures[name] = tf.saved_model.load(export_dir).signatures["serving_default"]
    if peer_python:
        export_dir = keras_hub_export(peer_python, size, seq_length)
        signatures[PEER] = tf.saved_model.load(export_dir).signatures["serving_default"]
    times = {name: [] for name in signatures}
    labels = {name: [] for name in signatures}
    for i, (a, b) in enumerate(pairs[:20] + pairs):
        for name, serve_text in signatures.items():
            start = time.perf_counter()
            label = serve_text(text_a=tf.constant([a]), text_b=tf.constant([b]))["label_id"]
            label = int(label.numpy()[0])
            if i >= 20:  # the first 20 warm up (tracing, oneDNN primitives per length)
                times[name].append(1000 * (time.perf_counter() - start))
                labels[name].append(label)
    rows = [(size, name, np.median(t), np.percentile(t, 90)) for name, t in times.items()]
    agreement = float(np.mean(np.array(labels["float32"]) == np.array(labels["bfloat16"])))
    return rows, agreement


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="tiny,base")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0, help="length of a timed window")
    parser.add_argument("--mrpc_dev", help="MRPC dev.tsv: also time one request per pair")
    parser.add_argument(
        "--peer_python",
        help="a python with keras-hub (benchmarks/README.md): with --mrpc_dev, keras-hub's "
        "BertTextClassifier exported the same way takes its turn on each pair too",
    )
    args = parser.parse_args()
    import tensorflow_text  # noqa: F401  (the SavedModel's tokenizer ops)

    rows = []
    for size in args.sizes.split(","):
        rows += measure(size, args.dtype, args.seq_length, args.repeats, args.seconds)
    print(f"GLUE classifier, seq {args.seq_length}; best of {args.repeats} windows of "
          f"{args.seconds:g} s; {os.cpu_count()} cores; TF {tf.__version__}")  # fmt: skip
    print(f"{'size':6} {'dtype':15} {'what':32} {'batch':>5} {'examples/s':>11}")
    print("-" * 73)
    for size, dtype, what, n, rate in rows:
        print(f"{size:6} {dtype:15} {what:32} {n:>5} {rate:>11.1f}")
    if args.mrpc_dev:
        pairs = mrpc_pairs(args.mrpc_dev)
        print(f"\nOne raw-text request per MRPC Dev pair ({len(pairs)} pairs), batch 1, ms")
        print(f"{'size':6} {'export':20} {'median':>8} {'p90':>8} {'/ ours':>9}")
        for size in args.sizes.split(","):
            latencies, agreement = request_latencies(size, args.seq_length, pairs, args.peer_python)
            ours = dict((name, median) for _, name, median, _ in latencies)["float32"]
            for size, name, median, p90 in latencies:
                print(f"{size:6} {name:20} {median:>8.1f} {p90:>8.1f} {median / ours:>8.2f}x")
            print(f"{size}: bfloat16 labels equal float32's on {100 * agreement:.1f}% of pairs")


if __name__ == "__main__":
    main()
