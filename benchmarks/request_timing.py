"""How benchmarks/serving.py times one runtime answering requests: the same protocol for ours,
the matmul floor and each peer, each in its own process (stdlib and numpy only, so that every
environment can import it).

A worker builds `answer(pairs) -> labels` (a batch of request pairs in, one label per pair out,
tokenization inside) and calls `time_requests`, which reports on stdout one JSON line:
- `first_ms`: the first request after loading (and after whatever the runtime does as it
  loads: TF Serving's warm-up replay for ours);
- `median_ms`, `p90_ms`: one pair a request (batch 1), over every pair, after a pass over the
  first `WARMUP` pairs;
- `batch_per_s`: pairs per second at batch `BATCH` (each batch padded to its longest pair), the
  best of `PASSES` passes over all pairs;
- `labels`: batch 1's label per pair, to compare runtimes' answers.

`time_in_turns` compares two `answer`s in one process more finely than two such reports can:
each pair (batch 1, after the same warm-up) answered by both, the one going first alternating
from pair to pair, so that whatever else the machine does falls on both alike.
"""

from __future__ import annotations

import json
import time

import numpy as np

WARMUP = 20
BATCH = 32
PASSES = 2


def read_pairs(path: str) -> list[dict]:
    """The requests serving.py wrote: [{"a": text_a, "b": text_b, "tokens": packed length}]."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def time_requests(answer, pairs: list[dict], load_s: float) -> dict:
    """Runs the protocol above with `answer`; returns the report (and prints it as JSON)."""
    start = time.perf_counter()
    answer(pairs[:1])
    first_ms = 1000 * (time.perf_counter() - start)
    for pair in pairs[:WARMUP]:
        answer([pair])
    latencies, labels = [], []
    for pair in pairs:
        start = time.perf_counter()
        (label,) = answer([pair])
        latencies.append(1000 * (time.perf_counter() - start))
        labels.append(int(label))
    rates = []
    for _ in range(PASSES):
        start = time.perf_counter()
        for i in range(0, len(pairs), BATCH):
            answer(pairs[i : i + BATCH])
        rates.append(len(pairs) / (time.perf_counter() - start))
    report = {
        "load_s": round(load_s, 2),
        "first_ms": round(first_ms, 2),
        "median_ms": round(float(np.median(latencies)), 2),
        "p90_ms": round(float(np.percentile(latencies, 90)), 2),
        "batch_per_s": round(max(rates), 2),
        "labels": labels,
    }
    print(json.dumps(report), flush=True)
    return report


def time_in_turns(answers: list, pairs: list[dict]) -> dict:
    """Two `answer`s taking turns on each pair (above); their batch-1 medians, the second's
    over the first's, and on how many pairs their labels agree (and prints it as JSON)."""
    for pair in pairs[:WARMUP]:
        for answer in answers:
            answer([pair])
    latencies, labels = ([], []), ([], [])
    for j, pair in enumerate(pairs):
        for i in (0, 1) if j % 2 == 0 else (1, 0):
            start = time.perf_counter()
            (label,) = answers[i]([pair])
            latencies[i].append(1000 * (time.perf_counter() - start))
            labels[i].append(int(label))
    medians = [float(np.median(t)) for t in latencies]
    report = {
        "median_ms": [round(m, 2) for m in medians],
        "ratio": round(medians[1] / medians[0], 3),
        "labels_agree": sum(a == b for a, b in zip(*labels, strict=True)),
        "pairs": len(pairs),
    }
    print(json.dumps(report), flush=True)
    return report
