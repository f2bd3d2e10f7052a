"""SQuAD throughput, printed as a table: featurization, prediction and post-processing.

- featurization: features/s (and examples/s) of `convert_examples_to_features` on SQuAD 1.1
  dev (../shared/data/squad/dev-v1.1.json; the repository's sample when it is absent) at the
  original's settings (384 / 128 / 64), and of `compute_predictions` (n-best 20, max answer 30);
- prediction: windows/s of the model alone (batch 8, `--predict_batch_size`'s default) and
  questions/s of the exported SavedModel's raw-text signature (question + context strings in,
  answer out: tokenization, windows, model, span choice), BERT-Tiny and BERT-Base at 384.

    python benchmarks/run_squad.py                  # tiny and base
    python benchmarks/run_squad.py --sizes=tiny --examples=2000

Each rate is the best of --repeats timed windows after a warm-up, in one process.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before TensorFlow is imported

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from timing import best_rate  # noqa: E402  (benchmarks/timing.py)

from bert_tf.config import BertConfig  # noqa: E402
from bert_tf.modeling.span_labeler import BertSpanLabeler  # noqa: E402
from bert_tf.squad.data import read_squad_examples, read_squad_file  # noqa: E402
from bert_tf.squad.features import convert_examples_to_features  # noqa: E402
from bert_tf.squad.options import SquadOptions  # noqa: E402
from bert_tf.squad.postprocess import RawResult, compute_predictions  # noqa: E402
from bert_tf.squad.serving import export_squad  # noqa: E402
from bert_tf.squad.task import EXPORT_SETTINGS  # noqa: E402
from bert_tf.tokenization import FullTokenizer  # noqa: E402

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SIZES = {"tiny": (2, 128), "mini": (4, 256), "base": (12, 768)}
VOCAB = os.path.join(REPO, "sample_data", "vocab.txt")
DEV = os.path.join(REPO, "..", "shared", "data", "squad", "dev-v1.1.json")
SAMPLE = os.path.join(REPO, "tests", "fixtures", "squad", "v1_sample.json")


def featurization(examples, tokenizer) -> list[tuple]:
    start = time.perf_counter()
    features = list(convert_examples_to_features(examples, tokenizer, 384, 128, 64, False))
    seconds = time.perf_counter() - start
    rng = np.random.default_rng(0)
    results = [
        RawResult(f.unique_id, *rng.normal(size=(2, 384)).astype(np.float32)) for f in features
    ]
    post_start = time.perf_counter()
    compute_predictions(examples, features, results, 20, 30, True)
    post_seconds = time.perf_counter() - post_start
    return [
        ("-", "featurize (convert_examples_to_features)", "features/s", len(features) / seconds),
        ("-", "featurize (convert_examples_to_features)", "examples/s", len(examples) / seconds),
        ("-", "post-process (compute_predictions)", "examples/s", len(examples) / post_seconds),
    ], features


def prediction(size: str, examples, features, args) -> list[tuple]:
    layers, hidden = SIZES[size]
    config = BertConfig(
        vocab_size=30522,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 64,
        intermediate_size=4 * hidden,
        max_position_embeddings=512,
    )
    model = BertSpanLabeler(config)
    batch = {
        name: tf.constant([getattr(f, name) for f in features[:8]], tf.int32)
        for name in ("input_ids", "input_mask", "segment_ids")
    }
    call = tf.function(lambda inputs: model(inputs, training=False), jit_compile=False)
    rows = [(size, "predict, model (batch 8)", "windows/s",
             best_rate(lambda: call(batch)["start_logits"].numpy(), 8, args.seconds,
                       args.repeats))]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        options = SquadOptions(bert_config_file="", vocab_file=VOCAB, output_dir=tmp)
        export_dir = os.path.join(tmp, "export")
        settings = {name: getattr(options, name) for name in EXPORT_SETTINGS}
        export_squad(model, export_dir, **settings)
        served = tf.saved_model.load(export_dir).signatures["serving_default"]
        for count in (1, 8):
            questions = tf.constant([e.question_text for e in examples[:count]])
            contexts = tf.constant([" ".join(e.doc_tokens) for e in examples[:count]])
            rate = best_rate(
                lambda q=questions, c=contexts: served(question=q, context=c)["answer"].numpy(),
                count,
                args.seconds,
                args.repeats,
            )
            rows.append((size, f"SavedModel raw text (batch {count})", "questions/s", rate))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="tiny,base")
    parser.add_argument("--examples", type=int, default=0, help="0: the whole dev set")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    keras.config.set_dtype_policy("float32")
    source = DEV if os.path.isfile(DEV) else SAMPLE
    examples = read_squad_examples(read_squad_file(source), source, is_training=False)
    if args.examples:
        examples = examples[: args.examples]
    tokenizer = FullTokenizer(VOCAB, do_lower_case=True)
    rows, features = featurization(examples, tokenizer)
    for size in args.sizes.split(","):
        rows += prediction(size, examples, features, args)
    print(f"\n{os.path.basename(source)}: {len(examples)} examples, {len(features)} features "
          "(max_seq_length 384, doc_stride 128, max_query_length 64), float32\n")  # fmt: skip
    print(f"{'size':6} {'what':44} {'unit':12} {'rate':>10}")
    print("-" * 75)
    for size, what, unit, rate in rows:
        print(f"{size:6} {what:44} {unit:12} {rate:10.1f}")


if __name__ == "__main__":
    main()
