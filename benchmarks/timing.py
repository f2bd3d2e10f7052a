"""Timing shared by the benchmarks."""

from __future__ import annotations

import time


def best_rate(function, examples: int, seconds: float, repeats: int) -> float:
    """Examples/s of the fastest of `repeats` windows of about `seconds` each."""
    function()  # warm-up (tracing, compilation)
    rates = []
    for _ in range(repeats):
        calls, start = 0, time.perf_counter()
        while True:
            function()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
        rates.append(calls * examples / elapsed)
    return max(rates)
