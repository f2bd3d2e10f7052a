"""Where a compiled training step spends its GPU time: a table of kernels from a Chrome-format
trace (what `jax.profiler.trace` writes as `*.trace.json.gz`, and torch.profiler's
`export_chrome_trace`), without TensorBoard's profile plugin (not on the GPU machines here).

    python benchmarks/kernel_profile.py TRACE.json[.gz] --steps=3

Kernels are the events on the device's streams: in JAX's trace, the threads named `Stream ...`
of a process named for a GPU (its other lines, `XLA Ops` and `XLA Modules`, repeat the same
time and are not counted); in torch's, the events of category `kernel`, `gpu_memcpy` or
`gpu_memset`. Each kernel is put in one class by its name (matrix products, attention,
the rest) so that the table says what share of the step the matrix units work.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import re

DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
# Library matrix-product kernels (cuBLAS's nvjet / sm90_xmma / cutlass) and XLA's Triton GEMMs.
GEMM = re.compile(r"gemm|nvjet|xmma|cutlass|cublas|__dot|triton_gemm|gemv", re.IGNORECASE)
# Fused attention kernels (cuDNN's SDPA and its helpers, flash attention); an unfused softmax
# is a fusion like any other (and the masked LM's log-softmax is not attention).
ATTENTION = re.compile(r"flash|fmha|attention|sdpa|cudnn", re.IGNORECASE)


def kernel_class(name: str) -> str:
    if GEMM.search(name):
        return "matrix products"
    if ATTENTION.search(name):
        return "fused attention"
    if "memcpy" in name.lower() or "memset" in name.lower():
        return "copies"
    return "other (fusions, reductions, elementwise)"


def device_events(trace: dict) -> list[dict]:
    """The trace's kernel events: complete ('X') events on a GPU's streams."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    process = {}
    thread = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            process[e["pid"]] = str(e["args"].get("name", ""))
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            thread[(e["pid"], e.get("tid"))] = str(e["args"].get("name", ""))
    kernels = []
    for e in events:
        if e.get("ph") != "X":
            continue
        if e.get("cat") in DEVICE_CATEGORIES:
            kernels.append(e)
            continue
        on_gpu = "gpu" in process.get(e.get("pid"), "").lower()
        if on_gpu and thread.get((e["pid"], e.get("tid")), "").startswith("Stream"):
            kernels.append(e)
    return kernels


def summarize(trace: dict, steps: int, top: int = 30) -> str:
    """A table of the `top` kernels by time, per step, and the time per class of kernel."""
    kernels = device_events(trace)
    if not kernels:
        return "no GPU kernels in the trace (a CPU run?)\n"
    by_name: dict[str, list] = collections.defaultdict(lambda: [0.0, 0, ""])
    by_class: dict[str, float] = collections.defaultdict(float)
    for e in kernels:
        name = e["name"]
        entry = by_name[name]
        entry[0] += float(e.get("dur", 0.0))  # microseconds
        entry[1] += 1
        entry[2] = entry[2] or str(e.get("args", {}).get("hlo_op", ""))
        by_class[kernel_class(name)] += float(e.get("dur", 0.0))
    total = sum(by_class.values())
    start = min(float(e["ts"]) for e in kernels)
    end = max(float(e["ts"]) + float(e.get("dur", 0.0)) for e in kernels)
    lines = [
        f"kernel time {total / steps / 1e3:.2f} ms/step over {steps} steps; first kernel to "
        f"last {(end - start) / steps / 1e3:.2f} ms/step ({len(kernels) // steps} kernels/step)",
        "",
        f"{'class':42} {'ms/step':>8} {'share':>6}",
    ]
    for name, time in sorted(by_class.items(), key=lambda item: -item[1]):
        lines.append(f"{name:42} {time / steps / 1e3:>8.2f} {100 * time / total:>5.1f}%")
    lines += ["", f"{'ms/step':>8} {'share':>6} {'calls':>6}  kernel [hlo op]"]
    ranked = sorted(by_name.items(), key=lambda item: -item[1][0])
    for name, (time, calls, hlo_op) in ranked[:top]:
        label = name if len(name) <= 90 else name[:87] + "..."
        op = f" [{hlo_op}]" if hlo_op and hlo_op != name else ""
        lines.append(
            f"{time / steps / 1e3:>8.3f} {100 * time / total:>5.1f}% {calls // steps:>6}  "
            f"{label}{op}"
        )
    return "\n".join(lines) + "\n"


def load_trace(path: str) -> dict:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--steps", type=int, default=1, help="steps the trace holds")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    print(summarize(load_trace(args.trace), args.steps, args.top), end="")


if __name__ == "__main__":
    main()
