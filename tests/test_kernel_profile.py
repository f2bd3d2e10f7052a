"""benchmarks/kernel_profile.py: the GPU kernel table of a traced training step."""

from __future__ import annotations

import importlib.util

from conftest import REPO

# By its path: benchmarks/ on sys.path would shadow the top-level scripts that other tests
# import by name (benchmarks/create_pretraining_data.py).
_spec = importlib.util.spec_from_file_location(
    "kernel_profile", REPO / "benchmarks" / "kernel_profile.py"
)
kernel_profile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kernel_profile)
kernel_class, model_part, summarize = (
    kernel_profile.kernel_class, kernel_profile.model_part, kernel_profile.summarize
)  # fmt: skip

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


# Two instructions of a compiled step as XLA prints them (abridged).
HLO = """
  %fusion.3620 = bf16[32,12,512,512]{3,2,1,0} fusion(%p0, %p1), kind=kCustom, calls=%fc.1, metadata={op_name="jit(step)/transpose(jvp(bert_encoder))/layer_11/attention_self/convert_element_type" stack_frame_id=461}
  %loop_compare_fusion = pred[32,12,512,512]{3,2,1,0} fusion(%p2), kind=kLoop, calls=%fc.2, metadata={op_name="jit(step)/jvp(bert_encoder)/layer_2/attention_self/dropout_5/jit(_bernoulli)/lt"}
"""  # noqa: E501


def test_with_the_hlo_kernels_are_summed_by_the_part_of_the_model_they_came_from():
    trace = jax_trace()
    trace["traceEvents"] += [kernel("fusion_3620", 1000.0), kernel("loop_compare_fusion", 400.0)]
    table = summarize(trace, steps=2, hlo_text=HLO)
    parts = table.split("part of the model")[1]
    assert row(parts, "bert_encoder/attention_self backward") == ["0.500", "10.6%"]
    assert row(parts, "bert_encoder/attention_self/dropout/_bernoulli") == ["0.200", "4.3%"]
    assert row(parts, "library matrix products") == ["3.000", "63.8%"]  # cuBLAS: no HLO name


def test_a_model_part_is_summed_over_layers_and_names_the_backward_pass():
    assert model_part("jit(step)/jvp(bert_encoder)/layer_0/intermediate/mul") == (
        "bert_encoder/intermediate"
    )
    assert (
        model_part(
            "jit(step)/transpose(jvp(bert_backbone))/transformer_layer_3/self_attention_layer/"
            "softmax_11/jit(_where)/select_n"
        )
        == "bert_backbone/self_attention_layer/softmax/_where backward"
    )
