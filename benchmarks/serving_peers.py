"""benchmarks/serving.py's peer worker: times the runtimes a user would pick instead of TF
Serving on a CPU, on the same weights (a Hugging Face directory written by our
scripts/convert_checkpoint.py), with request_timing's protocol; run by the peers' own python
(benchmarks/requirements-serving-peers.txt), never bert_tf's.

    python benchmarks/serving_peers.py --runtime=openvino --precision=bfloat16 \
      --hf_dir=mrpc_hf --pairs=pairs.json --work_dir=/tmp/serving

Every runtime tokenizes each request with transformers' BertTokenizerFast (the directory's
vocab and casing; pairs truncated longest first, as the original's truncate_seq_pair):
- torch: transformers' BertForSequenceClassification, eager, `inference_mode`; bfloat16 under
  CPU autocast;
- onnxruntime: the model exported to ONNX by torch, then onnxruntime.transformers' BERT
  optimizer (its fused attention, LayerNorm, GELU and bias ops); float32;
- openvino: the same ONNX file compiled by OpenVINO for the CPU, INFERENCE_PRECISION_HINT f32
  or bf16, the LATENCY hint.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from request_timing import read_pairs, time_requests  # benchmarks/request_timing.py

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def tokenizer_of(hf_dir: str, max_seq_length: int):
    from transformers import BertTokenizerFast

    tokenizer = BertTokenizerFast.from_pretrained(hf_dir)

    def encode(pairs, tensors: str):
        return tokenizer(
            [p["a"] for p in pairs], [p["b"] for p in pairs], padding=True,
            truncation="longest_first", max_length=max_seq_length, return_tensors=tensors,
        )  # fmt: skip

    return encode


def onnx_file(hf_dir: str, work_dir: str) -> str:
    """The model as ONNX (exported by torch once, kept in `work_dir`)."""
    path = os.path.join(work_dir, "model.onnx")
    if os.path.exists(path):
        return path
    import torch
    from transformers import BertForSequenceClassification

    # Eager attention: the graph whose attention the optimizer fuses (SDPA's it leaves apart).
    model = BertForSequenceClassification.from_pretrained(hf_dir, attn_implementation="eager")
    model = model.eval()
    example = tuple(torch.ones((1, 8), dtype=torch.int64) for _ in INPUTS)
    axes = {name: {0: "batch", 1: "sequence"} for name in INPUTS}
    partial = path + ".partial"
    with torch.inference_mode():
        torch.onnx.export(
            model, example, partial, input_names=list(INPUTS), output_names=["logits"],
            dynamic_axes=axes | {"logits": {0: "batch"}}, opset_version=17, dynamo=False,
        )  # fmt: skip
    os.replace(partial, path)
    return path


def torch_runtime(hf_dir, precision, threads, encode, work_dir):
    import contextlib

    import torch
    from transformers import BertForSequenceClassification

    torch.set_num_threads(threads)
    model = BertForSequenceClassification.from_pretrained(hf_dir).eval()
    autocast = (
        (lambda: torch.autocast("cpu", dtype=torch.bfloat16))
        if precision == "bfloat16"
        else contextlib.nullcontext
    )

    def answer(pairs):
        with torch.inference_mode(), autocast():
            logits = model(**encode(pairs, "pt")).logits
        return logits.float().argmax(-1).numpy()

    return answer


def optimized_onnx_file(hf_dir: str, work_dir: str) -> str:
    """The ONNX file after onnxruntime.transformers' BERT optimizer (kept in `work_dir`); the
    fused operators it made are printed."""
    from onnxruntime.transformers import optimizer

    path = os.path.join(work_dir, "model_bert_optimized.onnx")
    if not os.path.exists(path):
        with open(os.path.join(hf_dir, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
        model = optimizer.optimize_model(
            onnx_file(hf_dir, work_dir), model_type="bert",
            num_heads=config["num_attention_heads"], hidden_size=config["hidden_size"],
        )  # fmt: skip
        fused = {k: v for k, v in model.get_fused_operator_statistics().items() if v}
        print(json.dumps({"onnxruntime_fusions": fused}), flush=True)
        model.save_model_to_file(path)
    return path


def onnxruntime_runtime(hf_dir, precision, threads, encode, work_dir):
    import onnxruntime

    if precision != "float32":
        raise SystemExit("onnxruntime: float32 only here (its CPU kernels have no bfloat16)")
    optimized = optimized_onnx_file(hf_dir, work_dir)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    session = onnxruntime.InferenceSession(optimized, options, providers=["CPUExecutionProvider"])

    def answer(pairs):
        features = encode(pairs, "np")
        (logits,) = session.run(["logits"], {n: features[n].astype(np.int64) for n in INPUTS})
        return logits.argmax(-1)

    return answer


def openvino_runtime(hf_dir, precision, threads, encode, work_dir):
    import openvino

    core = openvino.Core()
    compiled = core.compile_model(
        core.read_model(onnx_file(hf_dir, work_dir)),
        "CPU",
        {
            "INFERENCE_PRECISION_HINT": {"float32": "f32", "bfloat16": "bf16"}[precision],
            "INFERENCE_NUM_THREADS": threads,
            "PERFORMANCE_HINT": "LATENCY",
        },
    )
    request = compiled.create_infer_request()

    def answer(pairs):
        features = encode(pairs, "np")
        outputs = request.infer({n: features[n].astype(np.int64) for n in INPUTS})
        return next(iter(outputs.values())).argmax(-1)

    return answer


RUNTIMES = {
    "torch": torch_runtime,
    "onnxruntime": onnxruntime_runtime,
    "openvino": openvino_runtime,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtime", choices=sorted(RUNTIMES), required=True)
    parser.add_argument("--precision", choices=("float32", "bfloat16"), default="float32")
    parser.add_argument(
        "--hf_dir", required=True, help="the model, as convert_checkpoint.py wrote it"
    )
    parser.add_argument("--pairs", required=True, help="the requests, as serving.py writes them")
    parser.add_argument("--work_dir", required=True, help="where the ONNX files are kept")
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    encode = tokenizer_of(args.hf_dir, args.max_seq_length)
    pairs = read_pairs(args.pairs)
    # Conversion (ONNX export, the optimizer) is not load time: done once, before it starts.
    if args.runtime == "openvino":
        onnx_file(args.hf_dir, args.work_dir)
    elif args.runtime == "onnxruntime":
        optimized_onnx_file(args.hf_dir, args.work_dir)
    start = time.perf_counter()
    answer = RUNTIMES[args.runtime](
        args.hf_dir, args.precision, args.threads, encode, args.work_dir
    )
    time_requests(answer, pairs, time.perf_counter() - start)


if __name__ == "__main__":
    main()
