"""Serving on this machine's CPU: our raw-text SavedModel beside the runtimes a user would pick
instead, on the same weights and the same MRPC Dev pairs, in one run; printed as a table.

    python benchmarks/serving.py --mrpc_dev=../shared/data/glue/MRPC/dev.tsv \
      --peer_python=/work/serving-peers/bin/python

The model: a BERT-Base MRPC classifier as a user makes one, by the scripts as typed
(scripts/make_random_bert.py, then run_classifier.py for a few steps with --export_dir, again
with --export_dtype=bfloat16, and scripts/convert_checkpoint.py to Hugging Face's format for
the peers), or the fine-tuned run_classifier.py --output_dir given as --output_dir. Then each
runtime alone, one process after another, with benchmarks/request_timing.py's protocol
(tokenization inside every request; --threads threads everywhere):
- ours, float32 and bfloat16: benchmarks/serving_tf.py, which imports tensorflow and
  tensorflow_text only, as TF Serving runs an export, and replays its warm-up file first;
  with --baseline_exports, an earlier commit's exports of the same classifier beside them;
- TensorFlow's matmul floor at both dtypes (serving_tf.py --floor): the encoder's products
  alone at each request's token count;
- the peers (benchmarks/serving_peers.py, run by --peer_python, an environment of
  benchmarks/requirements-serving-peers.txt): transformers on torch (float32; bfloat16 under
  autocast), ONNX Runtime with its BERT fusions (float32), OpenVINO (f32, bf16).
Each row: median and p90 ms at batch 1, the first request after loading, pairs/s at batch 32,
and ratios to the fastest peer of its precision and to the floor. Then how often bfloat16's
labels equal float32's, and ours equal torch's. Everything also goes to --work_dir/serving.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BERT_BASE = {
    "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
    "max_position_embeddings": 512, "num_attention_heads": 12, "num_hidden_layers": 12,
    "type_vocab_size": 2, "vocab_size": 30522,
}  # fmt: skip
PRECISIONS = ("float32", "bfloat16")


def run(command: list[str], what: str) -> str:
    """Runs `command`; its stdout. A failure stops the benchmark with the command's last lines."""
    print(f"[serving] {what}", file=sys.stderr, flush=True)
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if result.returncode:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-15:])
        raise SystemExit(f"benchmarks/serving.py: {what} failed:\n{' '.join(command)}\n{tail}")
    return result.stdout


def make_model(work_dir: str, args: argparse.Namespace) -> str:
    """run_classifier.py's --output_dir of the classifier served here (made by the scripts as a
    user runs them unless --output_dir is given); its exports go to work_dir/export_<dtype>,
    and for the peers its Hugging Face copy to work_dir/hf."""
    python, output_dir, data_dir = sys.executable, args.output_dir, os.path.dirname(args.mrpc_dev)
    if not output_dir:
        output_dir = os.path.join(work_dir, "mrpc")
        config_file = args.bert_config_file
        if not config_file:
            config_file = os.path.join(work_dir, "bert_config.json")
            with open(config_file, "w", encoding="utf-8") as f:
                json.dump(BERT_BASE, f)
        bert_dir = os.path.join(work_dir, "bert")
        if not os.path.exists(os.path.join(bert_dir, "bert_model.ckpt.index")):
            run([python, "scripts/make_random_bert.py", f"--bert_config_file={config_file}",
                 f"--output_dir={bert_dir}"], "a random BERT")  # fmt: skip
        if not os.path.exists(os.path.join(output_dir, "checkpoint")):
            run([python, "run_classifier.py", "--task_name=MRPC", "--do_train=true",
                 f"--num_train_epochs={args.num_train_epochs}", "--train_batch_size=8",
                 f"--data_dir={data_dir}",
                 f"--bert_config_file={config_file}", "--vocab_file=sample_data/vocab.txt",
                 f"--init_checkpoint={bert_dir}/bert_model.ckpt", f"--output_dir={output_dir}",
                 f"--max_seq_length={args.max_seq_length}"],
                "run_classifier.py: a few steps")  # fmt: skip
    for dtype in PRECISIONS:
        export_dir = os.path.join(work_dir, f"export_{dtype}")
        if not os.path.exists(os.path.join(export_dir, "saved_model.pb")):
            run([python, "run_classifier.py", "--task_name=MRPC", f"--data_dir={data_dir}",
                 f"--bert_config_file={output_dir}/bert_config.json",
                 f"--vocab_file={output_dir}/vocab.txt",
                 f"--output_dir={output_dir}", f"--export_dir={export_dir}",
                 f"--export_dtype={dtype}", f"--max_seq_length={args.max_seq_length}"],
                f"run_classifier.py --export_dtype={dtype}")  # fmt: skip
    hf_dir = os.path.join(work_dir, "hf")
    if args.peer_python and not os.path.exists(os.path.join(hf_dir, "config.json")):
        run([python, "scripts/convert_checkpoint.py", f"--input={output_dir}",
             f"--output={hf_dir}"], "convert_checkpoint.py to Hugging Face's format")  # fmt: skip
    return output_dir


def write_pairs(
    mrpc_dev: str, count: int, model_dir: str, max_seq_length: int, path: str
) -> list[dict]:
    """The first `count` MRPC Dev pairs, each with its packed length (run_classifier's
    truncation, the casing of the model in `model_dir`), as the workers read them."""
    from bert_tf.model_io.source import ModelSource
    from bert_tf.tokenization import FullTokenizer

    source = ModelSource(model_dir)
    tokenizer = FullTokenizer(source.vocab_file, do_lower_case=source.do_lower_case())
    with open(mrpc_dev, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1 : count + 1]
    pairs = []
    for row in rows:
        tokens = len(tokenizer.tokenize(row[3])) + len(tokenizer.tokenize(row[4])) + 3
        pairs.append({"a": row[3], "b": row[4], "tokens": min(tokens, max_seq_length)})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(pairs, f)
    return pairs


def report_of(stdout: str) -> dict:
    """The worker's report: its last JSON line."""
    return json.loads([line for line in stdout.splitlines() if line.startswith("{")][-1])


def cpu() -> str:
    """The CPU's name and which of AVX-512, AVX512_BF16 and AMX it has, and the cores."""
    from bert_tf.serving.cpu import this_cpu

    found = this_cpu()
    return f"{found.describe() if found else 'unknown CPU'}, {os.cpu_count()} cores"


def table(results: dict) -> list[str]:
    """Markdown rows: each runtime and precision, with its ratios."""
    peers = ("torch", "onnxruntime", "openvino")
    lines = [
        "| runtime | precision | median ms | p90 ms | first ms | batch-32 pairs/s "
        "| median / fastest peer | median / floor | fastest peer's batch-32 / ours |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for precision in PRECISIONS:
        of = {name: r for (name, p), r in results.items() if p == precision}
        fastest = min((of[n]["median_ms"] for n in peers if n in of), default=None)
        best_rate = max((of[n]["batch_per_s"] for n in peers if n in of), default=None)
        floor = of.get("floor")
        for name, r in of.items():
            ratio = f"{r['median_ms'] / fastest:.2f}x" if fastest else "-"
            to_floor = f"{r['median_ms'] / floor['median_ms']:.2f}x" if floor else "-"
            rate = f"{best_rate / r['batch_per_s']:.2f}x" if best_rate else "-"
            lines.append(
                f"| {name} | {precision} | {r['median_ms']:.1f} | {r['p90_ms']:.1f} "
                f"| {r['first_ms']:.1f} | {r['batch_per_s']:.1f} | {ratio} | {to_floor} | {rate} |"
            )
    return lines


def agreement(a: dict | None, b: dict | None) -> str:
    if not a or not b:
        return "-"
    same = np.mean(np.array(a["labels"]) == np.array(b["labels"]))
    return f"{100 * same:.1f}% of {len(a['labels'])}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mrpc_dev", required=True, help="GLUE's MRPC dev.tsv")
    parser.add_argument("--peer_python", help="the peers' python (requirements-serving-peers.txt)")
    parser.add_argument("--output_dir", help="a fine-tuned run_classifier.py --output_dir to serve")
    parser.add_argument(
        "--bert_config_file", help="without --output_dir: the random BERT's shape (BERT-Base)"
    )
    parser.add_argument(
        "--num_train_epochs", type=float, default=0.01, help="without --output_dir: its training"
    )
    parser.add_argument("--work_dir", help="where the models and results go (kept; reused)")
    parser.add_argument(
        "--baseline_exports",
        help="an earlier run's --work_dir: its export_float32 and export_bfloat16 (an earlier "
        "commit's exports of the same classifier) timed beside this run's, as rows 'baseline'",
    )
    parser.add_argument("--pairs", type=int, default=200, help="how many MRPC Dev pairs")
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--runtimes",
        default="ours,floor,torch,onnxruntime,openvino",
        help="which rows to run (the baseline rows whenever --baseline_exports is given)",
    )
    args = parser.parse_args()
    for precision in PRECISIONS if args.baseline_exports else ():
        baseline = os.path.join(args.baseline_exports, f"export_{precision}", "saved_model.pb")
        if not os.path.exists(baseline):
            raise SystemExit(
                f"benchmarks/serving.py: --baseline_exports={args.baseline_exports} has no "
                f"{baseline}; expected an earlier run's --work_dir"
            )
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="bert_tf_serving_")
    os.makedirs(work_dir, exist_ok=True)
    output_dir = make_model(work_dir, args)
    pairs_file = os.path.join(work_dir, "pairs.json")
    pairs = write_pairs(args.mrpc_dev, args.pairs, output_dir, args.max_seq_length, pairs_file)
    threads = f"--threads={args.threads}"
    commands = {}
    for precision in PRECISIONS:
        worker = [sys.executable, "benchmarks/serving_tf.py", f"--pairs={pairs_file}", threads]
        commands["ours", precision] = worker + [f"--export_dir={work_dir}/export_{precision}"]
        if args.baseline_exports:
            baseline = os.path.join(args.baseline_exports, f"export_{precision}")
            commands["baseline", precision] = worker + [f"--export_dir={baseline}"]
        commands["floor", precision] = worker + [
            f"--floor={output_dir}/bert_config.json",
            f"--dtype={precision}",
        ]
        for runtime in ("torch", "onnxruntime", "openvino"):
            if args.peer_python and (runtime, precision) != ("onnxruntime", "bfloat16"):
                commands[runtime, precision] = [
                    args.peer_python, "benchmarks/serving_peers.py", f"--runtime={runtime}",
                    f"--precision={precision}", f"--hf_dir={work_dir}/hf", f"--pairs={pairs_file}",
                    f"--work_dir={work_dir}", threads, f"--max_seq_length={args.max_seq_length}",
                ]  # fmt: skip
    wanted = args.runtimes.split(",")
    results = {}
    for (name, precision), command in commands.items():
        if name in wanted or name == "baseline":
            results[name, precision] = report_of(run(command, f"{name}, {precision}"))
    tokens = [p["tokens"] for p in pairs]
    with open(os.path.join(output_dir, "bert_config.json"), encoding="utf-8") as f:
        shape = json.load(f)
    layers, hidden = shape["num_hidden_layers"], shape["hidden_size"]
    print(f"\nMRPC classifier ({layers} layers, hidden {hidden}), {len(pairs)} MRPC Dev pairs "
          f"({np.median(tokens):.0f} "
          f"tokens median, {max(tokens)} longest), {args.threads} threads; {cpu()}")  # fmt: skip
    print("\n".join(table(results)))
    get = results.get
    print(f"\nlabels: ours bfloat16 = ours float32 on {agreement(get(('ours', 'bfloat16')), get(('ours', 'float32')))}; "  # noqa: E501
          f"ours float32 = torch float32 on {agreement(get(('ours', 'float32')), get(('torch', 'float32')))}")  # noqa: E501  # fmt: skip
    with open(os.path.join(work_dir, "serving.json"), "w", encoding="utf-8") as f:
        json.dump({f"{n} {p}": r for (n, p), r in results.items()} | {"cpu": cpu()}, f, indent=1)
    print(f"(all numbers: {work_dir}/serving.json)")


if __name__ == "__main__":
    main()
