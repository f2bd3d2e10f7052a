"""Where a compiled training step spends its GPU time: a table of kernels from a Chrome-format
trace (what `jax.profiler.trace` writes as `*.trace.json.gz`, and torch.profiler's
`export_chrome_trace`), without TensorBoard's profile plugin (not on the GPU machines here).

    python benchmarks/kernel_profile.py TRACE.json[.gz] --steps=3 [--hlo=STEP.hlo.gz]

Kernels are the events on the device's streams: in JAX's trace, the threads named `Stream ...`
of a process named for a GPU (its other lines, `XLA Ops` and `XLA Modules`, repeat the same
time and are not counted); in torch's, the events of category `kernel`, `gpu_memcpy` or
`gpu_memset`. Each kernel is put in one class by its name (matrix products, fused attention,
the rest) so that the table says what share of the step the matrix units work. Given the
compiled step's HLO (`--hlo`, XLA's names are the kernels' names), the kernels are also summed
by the part of the model that their fusion came from (its `op_name`: layer, sub-layer,
forward or backward).
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


def hlo_op_names(hlo_text: str) -> dict[str, str]:
    """Each instruction of a compiled HLO module to its metadata's op_name (the traced
    operation it came from)."""
    names: dict[str, str] = {}
    pattern = r'^\s*(?:ROOT )?%([\w.\-]+) = .*?metadata=\{op_name="([^"]*)"'
    for match in re.finditer(pattern, hlo_text, re.MULTILINE):
        names.setdefault(match.group(1), match.group(2))
    return names


def model_part(op_name: str) -> str:
    """'jit(step)/transpose(jvp(bert_encoder))/layer_11/attention_self/dropout_23/jit(_bernoulli)/lt'
    -> 'bert_encoder/attention_self/dropout/_bernoulli backward': summed over layers, the
    primitive and the library function's insides dropped, the backward pass (a transpose)
    named."""
    backward = "transpose(" in op_name
    path = []
    for part in op_name.split("/")[1:-1]:  # without jit(step) and the primitive
        while wrapped := re.fullmatch(r"(?:transpose|jvp|vmap|checkpoint|remat)\((.*)\)", part):
            part = wrapped.group(1)
        if part.startswith("jit("):  # a library function (jax.random's _bernoulli, jnp's _var)
            path.append(part[len("jit(") : -1])
            break
        if not re.fullmatch(r"(?:transformer_)?layer_\d+", part):
            path.append(re.sub(r"_\d+$", "", part))
    return "/".join(path) + (" backward" if backward else "")


def kernel_part(name: str, op_names: dict[str, str]) -> str:
    """The model part of kernel `name`: XLA names a fusion's kernel after the instruction
    (`fusion_12` runs `fusion.12`); library kernels (cuBLAS) carry no instruction name."""
    for instruction in (name, re.sub(r"_(\d+)$", r".\1", name)):
        if instruction in op_names:
            return model_part(op_names[instruction])
    return "library matrix products" if GEMM.search(name) else "(not in the HLO)"


def summarize(trace: dict, steps: int, top: int = 30, hlo_text: str = "") -> str:
    """A table of the `top` kernels by time, per step, and the time per class of kernel; with
    the step's compiled HLO, the time per part of the model too."""
    kernels = device_events(trace)
    if not kernels:
        return "no GPU kernels in the trace (a CPU run?)\n"
    by_name: dict[str, list] = collections.defaultdict(lambda: [0.0, 0, ""])
    for e in kernels:
        entry = by_name[e["name"]]  # [microseconds, calls, hlo op]
        entry[0] += float(e.get("dur", 0.0))
        entry[1] += 1
        entry[2] = entry[2] or str(e.get("args", {}).get("hlo_op", ""))
    by_class: dict[str, float] = collections.defaultdict(float)
    for name, (time, _, _) in by_name.items():
        by_class[kernel_class(name)] += time
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
    if hlo_text:
        op_names = hlo_op_names(hlo_text)
        by_part: dict[str, float] = collections.defaultdict(float)
        for name, (time, _, _) in by_name.items():
            by_part[kernel_part(name, op_names)] += time
        lines += ["", f"{'ms/step':>8} {'share':>6}  part of the model (from the HLO's op names)"]
        for part, time in sorted(by_part.items(), key=lambda item: -item[1])[:top]:
            lines.append(f"{time / steps / 1e3:>8.3f} {100 * time / total:>5.1f}%  {part}")
    return "\n".join(lines) + "\n"


def read_text(path: str) -> str:
    """A file's text, gzip'd (`.gz`) or not."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return f.read()


def load_trace(path: str) -> dict:
    return json.loads(read_text(path))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--steps", type=int, default=1, help="steps the trace holds")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--hlo", default="", help="the step's compiled HLO text (.gz or not)")
    args = parser.parse_args()
    hlo_text = read_text(args.hlo) if args.hlo else ""
    print(summarize(load_trace(args.trace), args.steps, args.top, hlo_text), end="")


if __name__ == "__main__":
    main()
