"""benchmarks/serving.py's TensorFlow worker: times our raw-text SavedModel, or TensorFlow's
matmul floor for the same requests, with request_timing's protocol, in a process that imports
tensorflow and tensorflow_text only (as TF Serving runs an export: no bert_tf, no Keras).

    python benchmarks/serving_tf.py --pairs=pairs.json --export_dir=export/mrpc --threads=2
    python benchmarks/serving_tf.py --pairs=pairs.json --floor=bert_config.json --dtype=bfloat16
    python benchmarks/serving_tf.py --pairs=pairs.json --export_dir=new --against=old

Ours: loaded into a TF1 Session as TF Serving loads it, TF Serving's warm-up requests replayed
as TF Serving replays them on load, then each request is `serving_default` on the raw strings.
The floor: the encoder's matrix products alone (Q, K, V, the attention's two batched products,
the output projection, the feed-forward pair, every layer, and the pooler) at each request's
own token count, in the dtype given; what TensorFlow's matmuls cost, with nothing around them.
With --against, two exports (an earlier one first) taking turns on each pair at batch 1
(request_timing.time_in_turns): how a change to the export moves a request's time.
"""

from __future__ import annotations

import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf
from request_timing import read_pairs, time_in_turns, time_requests  # benchmarks/request_timing.py

# bert_tf.serving.warmup.WARMUP_FILE, written out: this process imports no bert_tf.
WARMUP_FILE = os.path.join("assets.extra", "tf_serving_warmup_requests")


def ours(export_dir: str, threads: int):
    """`answer` over the export's raw-text signature in a TF1 Session, as TF Serving runs an
    export (loaded, then TF Serving's warm-up requests, assets.extra/tf_serving_warmup_requests,
    replayed through their signatures, read with TF Serving's own protos); its load time in s."""
    import tensorflow_text  # noqa: F401  (the tokenizer's ops, as TF Serving links them)
    from tensorflow_serving.apis import prediction_log_pb2

    start = time.perf_counter()
    warmup = list(
        tf.data.TFRecordDataset(os.path.join(export_dir, WARMUP_FILE)).as_numpy_iterator()
    )
    config = tf.compat.v1.ConfigProto(
        intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads
    )
    with tf.Graph().as_default():
        session = tf.compat.v1.Session(config=config)
        signatures = tf.compat.v1.saved_model.load(session, ["serve"], export_dir).signature_def

    def run(name: str, inputs: dict) -> dict:
        signature = signatures[name]
        feed = {signature.inputs[k].name: v for k, v in inputs.items()}
        return session.run({k: v.name for k, v in signature.outputs.items()}, feed)

    for record in warmup:
        request = prediction_log_pb2.PredictionLog.FromString(record).predict_log.request
        run(request.model_spec.signature_name,
            {k: tf.make_ndarray(v) for k, v in request.inputs.items()})  # fmt: skip
    load_s = time.perf_counter() - start

    def answer(pairs):
        texts = {"text_a": [p["a"] for p in pairs], "text_b": [p["b"] for p in pairs]}
        return run("serving_default", texts)["label_id"]

    return answer, load_s


def floor(config_file: str, dtype: str):
    """`answer` running the encoder's matmuls alone at each request's token count; its set-up
    time in s."""
    start = time.perf_counter()
    with open(config_file, encoding="utf-8") as f:
        config = json.load(f)
    hidden, inner = config["hidden_size"], config["intermediate_size"]
    heads, layers = config["num_attention_heads"], config["num_hidden_layers"]
    rng = np.random.default_rng(0)

    def weight(*shape):
        return tf.constant(rng.normal(0, 0.02, shape).astype(np.float32), dtype)

    stack = [
        {name: weight(hidden, hidden) for name in ("q", "k", "v", "o")}
        | {"w1": weight(hidden, inner), "w2": weight(inner, hidden)}
        for _ in range(layers)
    ]
    pooler = weight(hidden, hidden)
    longest = 32 * config.get("max_position_embeddings", 512)
    x0 = weight(longest, hidden)

    @tf.function(input_signature=[tf.TensorSpec([], tf.int32)] * 2)
    def products(batch, tokens):
        x = x0[: batch * tokens]  # [B*S, H]
        for w in stack:
            q, k, v = (tf.reshape(x @ w[n], [batch * heads, tokens, -1]) for n in "qkv")
            scores = tf.matmul(q, k, transpose_b=True)  # [B*N, S, S]
            context = tf.reshape(tf.matmul(scores, v), [batch * tokens, hidden])
            x = ((context @ w["o"]) @ w["w1"]) @ w["w2"]
        return x[:batch] @ pooler

    def answer(pairs):
        products(len(pairs), max(p["tokens"] for p in pairs)).numpy()
        return np.zeros(len(pairs), np.int64)

    return answer, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", required=True, help="the requests, as serving.py writes them")
    parser.add_argument("--export_dir", help="our raw-text SavedModel")
    parser.add_argument("--against", help="an earlier export: time both, taking turns")
    parser.add_argument("--floor", help="a bert_config.json: time the matmul floor instead")
    parser.add_argument("--dtype", default="float32", help="the floor's dtype")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.against and not args.export_dir:
        parser.error(f"--against={args.against} compares an export with --export_dir; none given")
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    if args.against:
        answers = [ours(d, args.threads)[0] for d in (args.against, args.export_dir)]
        time_in_turns(answers, read_pairs(args.pairs))
        return
    if args.export_dir:
        answer, load_s = ours(args.export_dir, args.threads)
    else:
        answer, load_s = floor(args.floor, args.dtype)
    time_requests(answer, read_pairs(args.pairs), load_s)


if __name__ == "__main__":
    main()
