"""benchmarks/kernel_profile.py: the GPU kernel table of a traced training step."""

from __future__ import annotations

import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from kernel_profile import kernel_class, summarize  # noqa: E402

OTHER = "other (fusions, reductions, elementwise)"


def metadata(pid, name, tid=None):
    event = {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}}
    if tid is not None:
        event.update(name="thread_name", tid=tid)
    return event


def kernel(name, dur, pid=2, tid=7, **extra):
    return {"ph": "X", "pid": pid, "tid": tid, "ts": 0.0, "dur": dur, "name": name, **extra}


def jax_trace():
    """As JAX writes it: a GPU process whose `Stream` thread runs the kernels, and an `XLA Ops`
    line repeating them, beside the host's Python thread."""
    return {"traceEvents": [
        metadata(1, "/host:CPU"), metadata(1, "python", tid=3),
        metadata(2, "/device:GPU:0 (NVIDIA H200)"), metadata(2, "Stream #13(Compute)", tid=7),
        metadata(2, "XLA Ops", tid=8),
        kernel("nvjet_hsh_256x128_gemm", 3000.0, args={"hlo_op": "custom-call.12"}),
        kernel("nvjet_hsh_256x128_gemm", 3000.0, args={"hlo_op": "custom-call.12"}),
        kernel("cudnn_generated_fort_native_sdpa_sm90_flash_fprop", 1500.0),
        kernel("xor_xor_fusion", 500.0),
        kernel("custom-call.12", 6000.0, tid=8),  # the XLA Ops line: not a kernel
        kernel("PjitFunction(step)", 99999.0, pid=1, tid=3),  # the host
    ]}  # fmt: skip


def row(table: str, label: str) -> list[str]:
    """The table's line for `label` (a class, or a kernel name), as its numbers."""
    line = next(line for line in table.splitlines() if label in line)
    return line.replace(label, "").split()


def test_only_the_streams_kernels_count_each_step_and_class_adds_up():
    table = summarize(jax_trace(), steps=2)
    # 8,000 us of kernels over 2 steps, the XLA Ops line and the host's events left out.
    assert table.startswith("kernel time 4.00 ms/step over 2 steps")
    assert row(table, "matrix products") == ["3.00", "75.0%"]
    assert row(table, "fused attention") == ["0.75", "18.8%"]
    # The top kernel: 3 ms a step, one call a step, its HLO op named.
    assert row(table, "nvjet_hsh_256x128_gemm") == ["3.000", "75.0%", "1", "[custom-call.12]"]


def test_torch_traces_count_their_kernel_category():
    trace = {"traceEvents": [
        kernel("ampere_bf16_s16816gemm", 800.0, pid=0, tid=0, cat="kernel"),
        kernel("flash_fwd_kernel", 200.0, pid=0, tid=0, cat="kernel"),
        kernel("aten::mm", 5000.0, pid=0, tid=0, cat="cpu_op"),
    ]}  # fmt: skip
    table = summarize(trace, steps=1)
    assert table.startswith("kernel time 1.00 ms/step")
    assert row(table, "matrix products") == ["0.80", "80.0%"]


def test_a_trace_without_device_kernels_says_so():
    assert summarize({"traceEvents": [kernel("PjitFunction(step)", 1.0, pid=1)]}, 1).startswith(
        "no GPU kernels"
    )


def test_kernel_classes_by_name():
    assert kernel_class("sm90_xmma_gemm_bf16bf16_bf16f32") == "matrix products"
    assert kernel_class("triton_gemm_dot_3") == "matrix products"
    assert kernel_class("pytorch_flash::flash_bwd_kernel") == "fused attention"
    assert kernel_class("void cudnn::fusion::compute_dot_do_o_specialized<true, 64>") == (
        "fused attention"
    )
    assert kernel_class("triton_red_fused__log_softmax_addmm") == OTHER
    assert kernel_class("loop_add_fusion_4") == OTHER
