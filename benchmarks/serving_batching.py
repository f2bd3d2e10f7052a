"""TF Serving's request batching (`--enable_batching --batching_parameters_file=...`) on our
raw-text SavedModel: concurrent clients each sending one MRPC Dev pair a request, answered with
and without batching; requests/s and latency for each parameters file and client count.

    python benchmarks/serving_batching.py --export_dir=/tmp/mrpc_export \
      --mrpc_dev=../shared/data/glue/MRPC/dev.tsv \
      --batching_parameters_file=docs/batching_parameters.txt --clients=1,4,8

This machine has no TF Serving, so the batching is TensorFlow's own `BatchFunction` op, which
runs TF Serving's batch scheduler with the same parameters (max_batch_size,
batch_timeout_micros, num_batch_threads, max_enqueued_batches, allowed_batch_sizes) around the
export's `serving_default` signature; without batching each request runs on its own, at the
same time as the others, as TF Serving runs requests without --enable_batching. Clients are
threads of this process (a closed loop: each sends its next pair when answered), timed after
warm-up requests; the settings take turns over the pairs, twice, and each keeps its faster
pass; tokenization is inside every request. Imports tensorflow and
tensorflow_text only, as TF Serving runs an export.
"""

from __future__ import annotations

import argparse
import os
import re
import threading
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np
import tensorflow as tf

# TF Serving's BatchingParameters (session_bundle_config.proto), in the text format it reads:
# `name { value: N }` (a wrapped value) or `allowed_batch_sizes: N` (repeated); where the file is
# silent, its batch scheduler's defaults (num_batch_threads: the machine's cores).
DEFAULTS = {"max_batch_size": 1000, "batch_timeout_micros": 0, "max_enqueued_batches": 10}
# Fields that change nothing for this benchmark's one-pair raw-text requests: none is split,
# and [batch] strings need no padding. Read, as TF Serving reads them, and left.
WITHOUT_EFFECT = (
    "enable_large_batch_splitting", "max_execution_batch_size", "thread_pool_name",
    "pad_variable_length_inputs",
)  # fmt: skip
# Each client's requests before the clock starts (its own pairs: several lengths).
WARMUP = 5
# Passes over the pairs for each setting and client count, taking turns; the fastest is kept.
PASSES = 2


def read_parameters(path: str) -> dict:
    """A --batching_parameters_file's fields; one line naming the file and the field for a
    field TF Serving does not know, or an allowed_batch_sizes that TF Serving would refuse."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"#[^\n]*", "", f.read())
    parameters = DEFAULTS | {"num_batch_threads": os.cpu_count(), "allowed_batch_sizes": []}
    value = r'("[^"]*"|[\w.]+)'
    for match in re.finditer(rf"(\w+)\s*(?:\{{\s*value\s*:\s*{value}\s*\}}|:\s*{value})", text):
        name, wrapped, plain = match.groups()
        number = wrapped if wrapped is not None else plain
        if name in parameters and not number.isdigit():
            raise SystemExit(
                f"--batching_parameters_file={path}: {match.group(0)!r}; expected a whole number"
            )
        if name in parameters and name != "allowed_batch_sizes" and wrapped is not None:
            parameters[name] = int(wrapped)
        elif name == "allowed_batch_sizes" and plain is not None:
            parameters[name].append(int(plain))
        elif name not in WITHOUT_EFFECT:
            raise SystemExit(
                f"--batching_parameters_file={path}: {match.group(0)!r}; expected TF Serving's "
                f"BatchingParameters ({', '.join(parameters)}, {', '.join(WITHOUT_EFFECT)})"
            )
    allowed = parameters["allowed_batch_sizes"]
    if allowed and allowed[-1] != parameters["max_batch_size"]:
        raise SystemExit(
            f"--batching_parameters_file={path}: allowed_batch_sizes ends at {allowed[-1]}; "
            f"expected it to end at max_batch_size, {parameters['max_batch_size']}"
        )
    return parameters


def read_pairs(mrpc_dev: str, count: int) -> list[tuple[str, str]]:
    """The first `count` MRPC Dev pairs (#1 String, #2 String)."""
    with open(mrpc_dev, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1 : count + 1]
    return [(row[3], row[4]) for row in rows]


def endpoints(export_dir: str, parameters: dict[str, dict]) -> dict:
    """`answer(text_a, text_b)` for one request: "none" straight through the export's
    `serving_default`, and one through TF Serving's batch scheduler for each parameters file."""
    import tensorflow_text  # noqa: F401  (the tokenizer's ops, as TF Serving links them)

    loaded = tf.saved_model.load(export_dir)  # kept: its signatures read its variables
    spec = [tf.TensorSpec([None], tf.string)] * 2

    def label_id(text_a, text_b):
        return loaded.signatures["serving_default"](text_a=text_a, text_b=text_b)["label_id"]

    answers = {"none": tf.function(label_id, input_signature=spec, autograph=False)}
    for name, p in parameters.items():
        batched = tf.compat.v1.nondifferentiable_batch_function(
            p["num_batch_threads"], p["max_batch_size"], p["batch_timeout_micros"],
            allowed_batch_sizes=p["allowed_batch_sizes"] or None,
            max_enqueued_batches=p["max_enqueued_batches"], autograph=False,
        )(label_id)  # fmt: skip
        answers[name] = tf.function(batched, input_signature=spec, autograph=False)
    return answers


def serve(answer, pairs: list[tuple[str, str]], clients: int) -> dict:
    """`clients` threads sending the pairs one a request until all are answered, timed from
    when all have answered their WARMUP requests: requests/s, median and p90 latency in ms."""

    def ask(pair):
        start = time.perf_counter()
        answer(tf.constant([pair[0]]), tf.constant([pair[1]])).numpy()
        return time.perf_counter() - start

    latencies, failures, lock, queue = [], [], threading.Lock(), list(reversed(pairs))
    warmed_up = threading.Barrier(clients + 1)

    def client(first):
        try:
            for pair in pairs[first : first + WARMUP]:
                ask(pair)
            warmed_up.wait()
            while True:
                with lock:
                    if not queue:
                        return
                    pair = queue.pop()
                took = ask(pair)
                with lock:
                    latencies.append(took)
        except Exception as error:  # noqa: BLE001  (raised again in the main thread)
            failures.append(error)
            warmed_up.abort()
            with lock:
                queue.clear()

    threads = [threading.Thread(target=client, args=(WARMUP * i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    try:
        warmed_up.wait()
    except threading.BrokenBarrierError:
        pass  # a client failed: its error is raised below
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    if failures:
        raise failures[0]
    return {
        "per_s": len(pairs) / wall,
        "median_ms": 1000 * float(np.median(latencies)),
        "p90_ms": 1000 * float(np.percentile(latencies, 90)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export_dir", required=True, help="our raw-text SavedModel")
    parser.add_argument("--mrpc_dev", required=True, help="GLUE's MRPC dev.tsv")
    parser.add_argument(
        "--batching_parameters_file", action="append", default=[],
        help="TF Serving's batching parameters (text format); repeat to compare several",
    )  # fmt: skip
    parser.add_argument("--clients", default="1,4,8", help="concurrent clients, comma-separated")
    parser.add_argument("--pairs", type=int, default=200, help="how many MRPC Dev pairs")
    parser.add_argument("--threads", type=int, default=2, help="TensorFlow's intra/inter-op")
    args = parser.parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    parameters = {path: read_parameters(path) for path in args.batching_parameters_file}
    answers = endpoints(args.export_dir, parameters)
    pairs = read_pairs(args.mrpc_dev, args.pairs)
    print(f"{len(pairs)} MRPC Dev pairs, one a request; {args.threads} threads; {args.export_dir}")
    print("| batching | clients | requests/s | median ms | p90 ms | requests/s / none |")
    print("|---|---|---|---|---|---|")
    for clients in [int(n) for n in args.clients.split(",")]:
        best: dict[str, dict] = {}
        for _ in range(PASSES):  # the settings take turns, so that a slow spell hits each
            for name, answer in answers.items():
                r = serve(answer, pairs, clients)
                if name not in best or r["per_s"] > best[name]["per_s"]:
                    best[name] = r
        unbatched = best["none"]["per_s"]
        for name, r in best.items():
            print(
                f"| {name} | {clients} | {r['per_s']:.1f} | {r['median_ms']:.0f} "
                f"| {r['p90_ms']:.0f} | {r['per_s'] / unbatched:.2f}x |",
                flush=True,
            )


if __name__ == "__main__":
    main()
