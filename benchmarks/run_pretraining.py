"""Pre-training throughput of bert_tf next to keras-hub's BERT, in sequences/s and GFLOP/s.

    python benchmarks/run_pretraining.py --peer_python=/work/bench-venv/bin/python

For every (size, dtype, XLA) configuration the driver runs each implementation in a fresh
process of this script (`--worker=ours` or `--worker=keras_hub`), `--repeats` times, ours and
the peer's interleaved (ABBA), and prints the best and worst of the fresh processes: timings on
shared CPU machines vary by up to 2x between processes but only ~5% within one.

- ours: `BertPretrainer` (MLM + NSP heads) trained by the real step of run_pretraining.py,
  `bert_tf.training.loop.Trainer.run_steps` with the original's AdamWeightDecay and global-norm
  clip.
- keras_hub: `keras_hub.models.BertMaskedLM` (BertBackbone + MaskedLMHead tied to the token
  embedding; no NSP), `model.fit` with AdamW and the same clip. keras-hub lives in its own
  environment (`--peer_python`, see benchmarks/README.md), never in bert_tf's.

Both read one synthetic batch, repeated: `--batch_size` sequences of `--seq_length` tokens with
`--max_predictions` masked positions, all real tokens and predictions (weights 1). The warm-up
steps (tracing, XLA compilation) are timed apart from the timed steps.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB_SIZE = 30522
# name: (layers, hidden); heads = hidden / 64 and intermediate = 4 * hidden, as the released
# BERT miniatures (Turc et al. 2019) and BERT-Base.
SIZES = {"tiny": (2, 128), "mini": (4, 256), "small": (4, 512), "base": (12, 768)}
# Timed steps per size when --timed_steps is not given: a few seconds of training each on two
# CPU cores, so that one default run stays affordable (see benchmarks/README.md).
DEFAULT_TIMED_STEPS = {"tiny": 30, "mini": 15, "small": 8, "base": 3}
IMPLEMENTATIONS = ("ours", "keras_hub")
# TensorFlow's CPU allocators: "bfc", which bert_tf's scripts choose on a CPU (bert_tf/cli.py),
# and "default", TensorFlow's own choice (the C library's malloc).
CPU_ALLOCATORS = ("bfc", "default")
RESULT_PREFIX = "RESULT "
# A timing taken while other processes kept more than this share of the cores busy is marked.
BUSY_THRESHOLD = 0.1


def training_flops_per_sequence(
    layers: int,
    hidden: int,
    seq_length: int,
    max_predictions: int,
    vocab_size: int = VOCAB_SIZE,
    next_sentence: bool = True,
) -> float:
    """Analytic training FLOPs of one sequence (a multiply-add counts 2).

    With L layers, H hidden, I = 4H intermediate, S = seq_length, P = max_predictions and
    V = vocab_size, the forward pass is

        2 * S * L * (4 H^2 + 2 H I)        the encoder's dense layers (Q, K, V, output, FFN)
      + 2 * 2 * S^2 * H * L                attention scores Q K^T and context probs V
      + 2 * P * (H^2 + H V)                masked-LM transform and tied decoder, P positions
      + 2 * (H^2 + 2 H)                    pooler and next-sentence classifier (ours only)

    and training counts 3x the forward (the backward pass computes two products per forward
    product: the gradients of the input and of the weight). Embedding lookups, LayerNorm,
    softmax, GELU and the optimizer update are not counted.
    """
    intermediate = 4 * hidden
    forward = 2 * seq_length * layers * (4 * hidden**2 + 2 * hidden * intermediate)
    forward += 2 * 2 * seq_length**2 * hidden * layers
    forward += 2 * max_predictions * (hidden**2 + hidden * vocab_size)
    if next_sentence:
        forward += 2 * (hidden**2 + 2 * hidden)
    return 3.0 * forward


FLOPS_FORMULA = (
    "training FLOPs/seq = 3 * [2*S*L*(4H^2 + 2*H*4H) + 4*S^2*H*L + 2*P*(H^2 + H*V)"
    " + 2*(H^2 + 2H) (NSP, ours only)]"
)


def synthetic_batch(batch_size: int, seq_length: int, max_predictions: int) -> dict:
    """One pre-training batch, named as the TFRecords' features, numpy int32/float32."""
    import numpy as np

    rng = np.random.default_rng(0)
    positions = np.stack(
        [
            np.sort(rng.choice(np.arange(1, seq_length), max_predictions, replace=False))
            for _ in range(batch_size)
        ]
    )
    segment_ids = np.zeros((batch_size, seq_length), "int32")
    segment_ids[:, seq_length // 2 :] = 1
    return {
        "input_ids": rng.integers(0, VOCAB_SIZE, (batch_size, seq_length), dtype="int32"),
        "input_mask": np.ones((batch_size, seq_length), "int32"),
        "segment_ids": segment_ids,
        "masked_lm_positions": positions.astype("int32"),
        "masked_lm_ids": rng.integers(0, VOCAB_SIZE, (batch_size, max_predictions), "int32"),
        "masked_lm_weights": np.ones((batch_size, max_predictions), "float32"),
        "next_sentence_labels": rng.integers(0, 2, (batch_size, 1), dtype="int32"),
    }


# Other processes on the machine. -----------------------------------------------------------


def cpu_seconds() -> tuple[float, float] | None:
    """(CPU seconds the whole machine has been busy, CPU seconds of this process), or None
    where /proc/stat is missing."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return None
    busy = sum(fields) - fields[3] - fields[4]  # all but idle and iowait, in clock ticks
    own = os.times()
    return busy / os.sysconf("SC_CLK_TCK"), own.user + own.system


def others_busy(before, after, wall_s: float) -> float | None:
    """The fraction of the machine's cores that other processes kept busy between two
    `cpu_seconds()`: a measurement taken while it is above ~0.1 is not to be trusted."""
    if before is None or after is None:
        return None
    machine, own = after[0] - before[0], after[1] - before[1]
    return max(machine - own, 0.0) / (wall_s * os.cpu_count())


def wait_until_idle(max_wait_s: float) -> float | None:
    """Waits (at most `max_wait_s`) until other processes leave the cores idle; returns the
    busy fraction last seen."""
    deadline = time.monotonic() + max_wait_s
    while True:
        start, before = time.monotonic(), cpu_seconds()
        time.sleep(1.0)
        busy = others_busy(before, cpu_seconds(), time.monotonic() - start)
        if busy is None or busy < BUSY_THRESHOLD or time.monotonic() > deadline:
            return busy
        time.sleep(4.0)


# The workers: one configuration, one fresh process. -----------------------------------------


def repeated(data):
    """`data` as one batch repeated forever, for both implementations.

    tf.data's autotuning is switched off: one repeated batch has nothing to tune, and with it
    on, `fit` returns only when the autotuner next wakes (its period doubles from 10 ms:
    ..., 2.56 s, 5.12 s), which added up to 2 s to a timed `fit` call of keras-hub.
    """
    import tensorflow as tf

    options = tf.data.Options()
    options.autotune.enabled = False
    return tf.data.Dataset.from_tensors(data).repeat().with_options(options)


def build_ours(args, features: dict):
    """bert_tf's training step: returns `run(num_steps)`."""
    import tensorflow as tf

    from bert_tf.config import BertConfig
    from bert_tf.optimization import create_optimizer
    from bert_tf.pretraining.objectives import get_objective
    from bert_tf.training.loop import Trainer

    layers, hidden = SIZES[args.size]
    config = BertConfig(
        vocab_size=VOCAB_SIZE,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 64,
        intermediate_size=4 * hidden,
        type_vocab_size=2,
    )
    objective = get_objective("mlm_nsp")
    strategy = tf.distribute.get_strategy()
    with strategy.scope():
        model = objective.build_model(config)
        optimizer = create_optimizer(1e-4, 10000, 100)
    trainer = Trainer(
        strategy, model, objective, optimizer, checkpoint_dir=None, use_xla=args.xla == "on"
    )
    iterator = trainer.distribute(repeated(features))
    return lambda num_steps: trainer.run_steps(iterator, num_steps)


def build_keras_hub(args, features: dict):
    """keras-hub's BertMaskedLM under `fit`: returns `run(num_steps)`."""
    import keras
    import keras_hub

    layers, hidden = SIZES[args.size]
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=VOCAB_SIZE,
        num_layers=layers,
        num_heads=hidden // 64,
        hidden_dim=hidden,
        intermediate_dim=4 * hidden,
        dropout=0.1,
        max_sequence_length=512,
    )
    model = keras_hub.models.BertMaskedLM(backbone=backbone, preprocessor=None)
    # keras-hub's own loss and weighted accuracy ("auto"); AdamW clipped as ours.
    model.compile(
        optimizer=keras.optimizers.AdamW(1e-4, weight_decay=0.01, global_clipnorm=1.0),
        jit_compile=args.xla == "on",
    )
    x = {
        "token_ids": features["input_ids"],
        "padding_mask": features["input_mask"],
        "segment_ids": features["segment_ids"],
        "mask_positions": features["masked_lm_positions"],
    }
    dataset = repeated((x, features["masked_lm_ids"], features["masked_lm_weights"]))
    return lambda num_steps: model.fit(
        dataset, steps_per_epoch=num_steps, epochs=1, shuffle=False, verbose=0
    )


def worker(args) -> None:
    import keras
    import tensorflow as tf

    keras.config.set_dtype_policy(args.dtype)
    features = synthetic_batch(args.batch_size, args.seq_length, args.max_predictions)
    build = build_ours if args.worker == "ours" else build_keras_hub
    run = build(args, features)
    start = time.perf_counter()
    run(args.warmup_steps)
    warm, before = time.perf_counter(), cpu_seconds()
    run(args.timed_steps)
    timed_s, after = time.perf_counter() - warm, cpu_seconds()
    result = {
        "warmup_s": warm - start,
        "timed_s": timed_s,
        "seq_per_s": args.batch_size * args.timed_steps / timed_s,
        "others_busy": others_busy(before, after, timed_s),
        # The process's peak resident memory (Linux counts KiB), warm-up and timed steps.
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
    }
    print(RESULT_PREFIX + json.dumps(result), flush=True)


# The driver. --------------------------------------------------------------------------------


def allocator_env(allocator: str) -> dict:
    """The environment that gives a worker's TensorFlow the CPU allocator `allocator`."""
    if allocator == "default":
        return {"TF_CPU_ALLOCATOR_USE_BFC": "false"}
    from bert_tf.cli import physical_memory_mb

    # As bert_tf/cli.py sets it for every script.
    return {
        "TF_CPU_ALLOCATOR_USE_BFC": "true",
        "TF_CPU_BFC_MEM_LIMIT_IN_MB": f"{physical_memory_mb()}",
    }


def run_worker(
    python: str, args, impl: str, size: str, dtype: str, xla: str, allocator: str
) -> dict:
    wait_until_idle(args.idle_wait_s)
    timed_steps = args.timed_steps or DEFAULT_TIMED_STEPS[size]
    command = [
        python,
        os.path.abspath(__file__),
        f"--worker={impl}",
        f"--size={size}",
        f"--dtype={dtype}",
        f"--xla={xla}",
        f"--batch_size={args.batch_size}",
        f"--seq_length={args.seq_length}",
        f"--max_predictions={args.max_predictions}",
        f"--warmup_steps={args.warmup_steps}",
        f"--timed_steps={timed_steps}",
    ]
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="2")
    env.update(allocator_env(allocator))
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    lines = [line for line in result.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if result.returncode or not lines:
        tail = "\n".join(result.stderr.splitlines()[-20:])
        sys.exit(
            f"{impl} {size} {dtype} xla={xla} {allocator} failed (exit {result.returncode}):\n"
            + tail
        )
    measured = json.loads(lines[-1][len(RESULT_PREFIX) :])
    measured["process_s"] = time.perf_counter() - start
    return measured


def measure(python: str, args, impl: str, size: str, dtype: str, xla: str, allocator: str) -> dict:
    """One fresh process; run again (up to --contended_retries times) while other processes
    took more than BUSY_THRESHOLD of the cores during its timed window."""
    for attempt in range(args.contended_retries + 1):
        measured = run_worker(python, args, impl, size, dtype, xla, allocator)
        if (measured["others_busy"] or 0.0) <= BUSY_THRESHOLD:
            break
        if attempt < args.contended_retries:
            print(
                f"  {impl} {size} {dtype} xla={xla} {allocator}: others kept "
                f"{busy_text(measured)} of the cores busy; measuring again",
                file=sys.stderr,
                flush=True,
            )
    return measured


def peer_available(python: str) -> bool:
    check = [python, "-c", "import keras_hub"]
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(check, capture_output=True, env=env).returncode == 0


def amx_note() -> str:
    from bert_tf.serving.cpu import this_cpu

    found = this_cpu()
    return "CPU flags unknown" if found is None else "AMX" if found.has("AMX") else "no AMX"


def drive(args) -> None:
    sizes = args.sizes.split(",")
    dtypes = args.dtypes.split(",")
    xlas = {"both": ["off", "on"], "on": ["on"], "off": ["off"]}[args.xla]
    implementations = args.implementations.split(",")
    allocators = args.cpu_allocators.split(",")
    for name, values, known in (
        ("--sizes", sizes, SIZES),
        ("--dtypes", dtypes, ("float32", "mixed_bfloat16")),
        ("--implementations", implementations, IMPLEMENTATIONS),
        ("--cpu_allocators", allocators, CPU_ALLOCATORS),
    ):
        unknown = [v for v in values if v not in known]
        if unknown:
            sys.exit(f"{name}: unknown {unknown}; expected some of {list(known)}")
    pythons = {"ours": sys.executable, "keras_hub": args.peer_python}
    if "keras_hub" in implementations and not peer_available(args.peer_python):
        print(
            f"note: keras_hub is not importable by --peer_python={args.peer_python}; the peer is "
            "skipped (set up its environment as benchmarks/README.md says)",
            file=sys.stderr,
        )
        implementations = [i for i in implementations if i != "keras_hub"]

    configs = [(s, d, x, a) for s in sizes for d in dtypes for x in xlas for a in allocators]
    runs: dict = {}
    for repeat in range(args.repeats):
        # ABBA: the implementation that runs first alternates between repeats.
        order = implementations if repeat % 2 == 0 else implementations[::-1]
        for config in configs:
            for impl in order:
                measured = measure(pythons[impl], args, impl, *config)
                runs.setdefault((*config, impl), []).append(measured)
                print(
                    f"[{repeat + 1}/{args.repeats}] {impl:9} {' '.join(config):34} "
                    f"{measured['seq_per_s']:8.2f} seq/s, others busy {busy_text(measured)} "
                    f"(warm-up {measured['warmup_s']:.1f} s, "
                    f"process {measured['process_s']:.1f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    print_table(args, configs, implementations, runs)
    print_targets(configs, runs)
    print_allocators(configs, implementations, runs)


def busy_text(measured: dict) -> str:
    busy = measured["others_busy"]
    return "?" if busy is None else f"{busy:.0%}"


def print_table(args, configs, implementations, runs) -> None:
    first = next(iter(runs.values()))[0]
    print(
        f"BERT pre-training step, batch {args.batch_size}, seq {args.seq_length}, "
        f"{args.max_predictions} predictions; {os.cpu_count()} cores, {amx_note()}; "
        f"TF {first['tensorflow']}, Keras {first['keras']}; best/worst of {args.repeats} "
        "fresh processes"
    )
    print(FLOPS_FORMULA)
    header = (
        f"{'size':6} {'dtype':15} {'xla':4} {'alloc':7} {'impl':10} {'batch':>5} "
        f"{'best seq/s':>11} {'worst seq/s':>12} {'GFLOP/s':>8} {'warm-up s':>10} "
        f"{'peak MiB':>9} {'others':>7} {'ours/peer':>10}"
    )
    print(header)
    print("-" * len(header))
    contended = False
    for config in configs:
        size, dtype, xla, allocator = config
        layers, hidden = SIZES[size]
        best = {
            impl: max(r["seq_per_s"] for r in runs[(*config, impl)]) for impl in implementations
        }
        for impl in implementations:
            measured = runs[(*config, impl)]
            rates = [r["seq_per_s"] for r in measured]
            flops = training_flops_per_sequence(
                layers, hidden, args.seq_length, args.max_predictions, next_sentence=impl == "ours"
            )
            warmup = min(r["warmup_s"] for r in measured)
            peak = max(r["peak_mib"] for r in measured)
            busiest = max(measured, key=lambda r: r["others_busy"] or 0.0)
            mark = " "
            if (busiest["others_busy"] or 0.0) > BUSY_THRESHOLD:
                mark, contended = "!", True
            ratio = ""
            if impl == "ours" and len(best) == 2:
                ratio = f"{best['ours'] / best['keras_hub']:.2f}x"
            print(
                f"{size:6} {dtype:15} {xla:4} {allocator:7} {impl:10} {args.batch_size:5d} "
                f"{max(rates):11.2f} {min(rates):12.2f} {max(rates) * flops / 1e9:8.1f} "
                f"{warmup:10.1f} {peak:9.0f} {busy_text(busiest):>6}{mark} {ratio:>10}"
            )
    print(
        "others: the largest share of the cores that other processes kept busy during a timed "
        "window"
        + ("; '!' marks rows above 10%: re-run them on a quiet machine" if contended else "")
        + "; peak MiB: the largest peak resident memory of a process"
    )


def print_targets(configs, runs) -> None:
    """The issue's targets, from the best process of each size, dtype, allocator and
    implementation over both XLA settings."""

    def best(size: str, dtype: str, allocator: str, impl: str) -> float | None:
        rates = [
            r["seq_per_s"]
            for (s, d, _, a, i), measured in runs.items()
            if (s, d, a, i) == (size, dtype, allocator, impl)
            for r in measured
        ]
        return max(rates, default=None)

    print(
        "targets (best over XLA on/off, one allocator): ours >= 1.2x keras_hub in float32; "
        "mixed_bfloat16 >= 2x our float32 on CPUs with AMX"
    )
    for size, allocator in dict.fromkeys((config[0], config[3]) for config in configs):
        ours = best(size, "float32", allocator, "ours")
        peer = best(size, "float32", allocator, "keras_hub")
        ours_bf16 = best(size, "mixed_bfloat16", allocator, "ours")
        parts = []
        if ours and peer:
            parts.append(f"ours/keras_hub float32 {ours / peer:.2f}x")
        if ours and ours_bf16:
            parts.append(f"ours mixed_bfloat16/float32 {ours_bf16 / ours:.2f}x")
        print(f"  {size:6} {allocator:7} " + ("; ".join(parts) or "(nothing to compare)"))


def print_allocators(configs, implementations, runs) -> None:
    """Each implementation under the BFC allocator over TensorFlow's default: the best
    sequences/s and the largest peak memory of its processes."""
    pairs = dict.fromkeys(config[:3] for config in configs)
    if not all((*pair, a) in configs for pair in pairs for a in CPU_ALLOCATORS):
        return
    print("bfc/default (bert_tf's scripts' CPU allocator over TensorFlow's): seq/s, peak memory")
    for pair in pairs:
        parts = []
        for impl in implementations:
            bfc, default = (runs[(*pair, a, impl)] for a in CPU_ALLOCATORS)
            speed = max(r["seq_per_s"] for r in bfc) / max(r["seq_per_s"] for r in default)
            memory = max(r["peak_mib"] for r in bfc) / max(r["peak_mib"] for r in default)
            parts.append(f"{impl} {speed:.2f}x, {memory:.2f}x")
        print(f"  {' '.join(pair):26} " + "; ".join(parts))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="tiny,mini,small,base")
    parser.add_argument("--dtypes", default="float32,mixed_bfloat16")
    parser.add_argument("--xla", default="both", choices=["both", "on", "off"])
    parser.add_argument("--implementations", default=",".join(IMPLEMENTATIONS))
    parser.add_argument(
        "--cpu_allocators",
        default="bfc",
        help="TensorFlow's CPU allocators to measure: bfc (what bert_tf's scripts choose), "
        "default (TensorFlow's), or bfc,default",
    )
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--max_predictions", type=int, default=20)
    parser.add_argument("--warmup_steps", type=int, default=2)
    parser.add_argument(
        "--timed_steps",
        type=int,
        default=0,
        help="0: by size, " + ", ".join(f"{k} {v}" for k, v in DEFAULT_TIMED_STEPS.items()),
    )
    parser.add_argument("--repeats", type=int, default=2, help="fresh processes per config")
    parser.add_argument(
        "--idle_wait_s",
        type=float,
        default=120.0,
        help="before each process, wait up to this long for other processes to leave the "
        "cores idle",
    )
    parser.add_argument(
        "--contended_retries",
        type=int,
        default=2,
        help="measure again when other processes were busy during the timed steps",
    )
    parser.add_argument(
        "--peer_python",
        default=sys.executable,
        help="the python of the environment with keras-hub (benchmarks/README.md)",
    )
    # Internal: run one configuration of one implementation and print its RESULT line.
    parser.add_argument("--worker", choices=IMPLEMENTATIONS)
    parser.add_argument("--size", choices=list(SIZES))
    parser.add_argument("--dtype")
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
    else:
        drive(args)


if __name__ == "__main__":
    main()
