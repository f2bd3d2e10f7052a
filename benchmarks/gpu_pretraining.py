"""The pre-training step on a GPU: bert_tf's BertPretrainer beside keras-hub's BertMaskedLM and
Hugging Face transformers' BertForPreTraining (+ torch.compile), as a table of sequences/s,
TFLOP/s and share of the GPU's bf16 peak, with each peer's ratio to ours.

    python benchmarks/gpu_pretraining.py                      # base128, base512, large128
    python benchmarks/gpu_pretraining.py --configs=tiny128 --steps=3 --warmup_steps=1  # on a CPU
    python benchmarks/gpu_pretraining.py --profile_dir=/tmp/profile  # + each step's kernels
    python benchmarks/gpu_pretraining.py --timing_lock=/tmp/gpu.lock --qkv=fused &  # side by
    python benchmarks/gpu_pretraining.py --timing_lock=/tmp/gpu.lock &  # side, timed in turn

It runs where there is no TensorFlow: ours and keras-hub on the Keras 3 JAX backend (bert_tf's
model, objective and heads are backend-agnostic Keras), HF on PyTorch. Each (config,
implementation) runs in a fresh process of this script (`--worker=...`); an implementation
whose packages are missing is skipped with a note. The same step for all three: dropout 0.1,
bf16 compute (`--dtype`), AdamW (lr 1e-4, weight decay 0.01) with a global-norm clip of 1.0,
jit-compiled (jax.jit for the Keras models, torch.compile for HF); one synthetic batch,
repeated, every token and prediction real. The compilation steps (`--warmup_steps`) are not
timed. With `--profile_dir`, each worker then traces `--profile_steps` more steps (JAX's or
torch's profiler), writes its kernel table there (`benchmarks/kernel_profile.py`) beside the
trace, and the Keras workers their compiled step's HLO, so that each kernel's fusion can be
read.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import gzip
import json
import os
import subprocess
import sys
import time

from kernel_profile import load_trace, summarize  # benchmarks/kernel_profile.py

from run_pretraining import training_flops_per_sequence  # benchmarks/run_pretraining.py

VOCAB_SIZE = 30522
# name: (layers, hidden, seq_length, max_predictions, batch): the paper's two phases (128/20,
# 512/80) at the batch sizes the issue measured on one H100.
CONFIGS = {
    "base128": (12, 768, 128, 20, 256),
    "base512": (12, 768, 512, 80, 32),
    "large128": (24, 1024, 128, 20, 128),
    "tiny128": (2, 128, 128, 20, 8),
}
IMPLEMENTATIONS = ("bert_tf", "keras_hub", "hf_torch_compile")
# Dense bf16 peak TFLOP/s by device name (NVIDIA's data sheets, without sparsity).
BF16_PEAK_TFLOPS = {"H100 PCIe": 756.0, "H100": 989.0, "H200": 989.0, "A100": 312.0}
RESULT_PREFIX = "RESULT "


def synthetic_batch(batch: int, seq_length: int, predictions: int):
    """One pre-training batch as numpy arrays: random tokens, all real; two segments."""
    import numpy as np

    rng = np.random.default_rng(0)
    segment_ids = np.zeros((batch, seq_length), np.int32)
    segment_ids[:, seq_length // 2 :] = 1
    positions = np.sort(
        np.stack([rng.choice(seq_length, predictions, replace=False) for _ in range(batch)]), 1
    ).astype(np.int32)
    return {
        "input_ids": rng.integers(1000, VOCAB_SIZE, (batch, seq_length)).astype(np.int32),
        "input_mask": np.ones((batch, seq_length), np.int32),
        "segment_ids": segment_ids,
        "masked_lm_positions": positions,
        "masked_lm_ids": rng.integers(1000, VOCAB_SIZE, (batch, predictions)).astype(np.int32),
        "masked_lm_weights": np.ones((batch, predictions), np.float32),
        "next_sentence_labels": rng.integers(0, 2, (batch, 1)).astype(np.int32),
    }


def keras_step(model, inputs_of, loss_of):
    """A jax.jit-compiled training step of a Keras model (stateless, as Keras's own JAX trainer):
    returns (step, state); step(state, batch) -> (loss, state). `inputs_of(batch)`: the model's
    inputs; `loss_of(outputs, batch)`: the loss."""
    import jax
    import keras

    optimizer = keras.optimizers.AdamW(1e-4, weight_decay=0.01, global_clipnorm=1.0)
    optimizer.build(model.trainable_variables)

    def loss_and_state(trainable, non_trainable, batch):
        outputs, non_trainable = model.stateless_call(
            trainable, non_trainable, inputs_of(batch), training=True
        )
        return loss_of(outputs, batch), non_trainable

    gradient = jax.value_and_grad(loss_and_state, has_aux=True)

    @jax.jit
    def step(state, batch):
        trainable, non_trainable, optimizer_variables = state
        (loss, non_trainable), grads = gradient(trainable, non_trainable, batch)
        trainable, optimizer_variables = optimizer.stateless_apply(
            optimizer_variables, grads, trainable
        )
        return loss, (trainable, non_trainable, optimizer_variables)

    state = (
        [v.value for v in model.trainable_variables],
        [v.value for v in model.non_trainable_variables],
        [v.value for v in optimizer.variables],
    )
    return step, state


def use_dropout_rng(impl: str) -> None:
    """Keras's dropout on JAX draws its masks with threefry (its seeds are raw threefry keys);
    `impl` "rbg" hands each dropout a key of JAX's `rbg` implementation (XLA's RngBitGenerator)
    instead, made from the same seed: what a Keras with typed keys could do. Benchmark only."""
    if impl == "threefry":
        return
    import jax
    import jax.numpy as jnp
    from keras.src.backend.jax import random as keras_jax_random

    draw = keras_jax_random.jax_draw_seed

    def draw_seed(seed):
        data = jnp.asarray(draw(seed), jnp.uint32)  # [2]: a threefry key's data
        return jax.random.wrap_key_data(jnp.concatenate([data, data]), impl=impl)  # [4]

    keras_jax_random.jax_draw_seed = draw_seed


def use_qkv(layout: str) -> None:
    """Ours computes Q, K and V as three [H, H] products of the same input (the original's
    layout, and its checkpoints' variables); `layout` "fused" makes them one [H, 3H] product of
    the three kernels concatenated in the step: one matrix product forward and one for the
    input's gradient, where three products and their sum are now. The variables stay query, key
    and value. Benchmark only, until measured."""
    if layout == "separate":
        return
    from keras import ops

    from bert_tf.modeling.attention import SelfAttention

    def project(self, hidden):  # hidden [B, S, H] -> q, k, v [B, N, S, D]
        dense = (self.query, self.key, self.value)
        kernel = ops.concatenate([ops.cast(d.kernel, self.compute_dtype) for d in dense], -1)
        bias = ops.concatenate([ops.cast(d.bias, self.compute_dtype) for d in dense], -1)
        qkv = ops.matmul(hidden, kernel) + bias  # [B, S, 3H]
        batch, seq = ops.shape(hidden)[0], ops.shape(hidden)[1]
        return tuple(self._split_heads(x, batch, seq) for x in ops.split(qkv, 3, axis=-1))

    SelfAttention.project = project


def use_softmax(dtype: str) -> None:
    """Ours computes the attention softmax in float32 under mixed precision and casts the
    probabilities to the compute dtype: the float32 output is what autodiff keeps for the
    backward pass, [B, N, S, S] at 4 bytes. `dtype` "compute" runs it in the compute dtype
    instead, as keras-hub's does (bfloat16 has float32's range, so -10000 and exp() fit; float16
    does not, and keeps float32). Benchmark only, until measured."""
    if dtype == "float32":
        return
    from keras import ops

    from bert_tf.modeling.attention import SelfAttention

    def probabilities(self, scores, mask_adder, training=None):  # scores [B, N, S, S]
        softmax_dtype = "float32" if self.compute_dtype == "float16" else self.compute_dtype
        scores = ops.cast(scores, softmax_dtype) + ops.cast(mask_adder, softmax_dtype)
        probs = ops.cast(ops.softmax(scores, axis=-1), self.compute_dtype)
        return self.dropout(probs, training=training)

    SelfAttention.probabilities = probabilities


def bert_tf_step(layers, hidden, dtype):
    """Ours: BertPretrainer (both heads) and the paper's loss, `pretraining_loss`."""
    import keras

    from bert_tf.config import BertConfig
    from bert_tf.modeling.pretrainer import BertPretrainer
    from bert_tf.pretraining.objectives import pretraining_loss

    keras.config.set_dtype_policy(dtype)
    config = BertConfig(
        vocab_size=VOCAB_SIZE, hidden_size=hidden, num_hidden_layers=layers,
        num_attention_heads=hidden // 64, intermediate_size=4 * hidden,
        max_position_embeddings=512,
    )  # fmt: skip
    model = BertPretrainer(config)

    def inputs_of(batch):
        return {name: batch[name] for name in model.input}

    def loss_of(outputs, batch):
        return pretraining_loss(outputs, batch)["loss"]

    return keras_step(model, inputs_of, loss_of)


def keras_hub_step(layers, hidden, dtype):
    """keras-hub: BertBackbone + BertMaskedLM's tied head, its masked-LM cross-entropy (no NSP)."""
    import keras
    import keras_hub
    from keras import ops

    keras.config.set_dtype_policy(dtype)
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=VOCAB_SIZE, num_layers=layers, num_heads=hidden // 64,
        hidden_dim=hidden, intermediate_dim=4 * hidden, dropout=0.1, max_sequence_length=512,
    )  # fmt: skip
    model = keras_hub.models.BertMaskedLM(backbone=backbone, preprocessor=None)

    def inputs_of(batch):
        return {
            "token_ids": batch["input_ids"], "padding_mask": batch["input_mask"] > 0,
            "segment_ids": batch["segment_ids"], "mask_positions": batch["masked_lm_positions"],
        }  # fmt: skip

    def loss_of(logits, batch):
        nll = keras.losses.sparse_categorical_crossentropy(
            batch["masked_lm_ids"], ops.cast(logits, "float32"), from_logits=True
        )
        return ops.mean(nll)

    return keras_step(model, inputs_of, loss_of)


def measure_keras(implementation, layers, hidden, seq_length, predictions, batch, args):
    """(result, profile): the timed steps' result, and a function that traces more steps."""
    import jax

    # JAX's default threefry ("partitionable") hashes once per 32-bit draw and XORs the pair;
    # "original" takes both words of each hash: half the hashing for the same dropout masks' law.
    jax.config.update("jax_threefry_partitionable", args.threefry == "partitionable")
    use_dropout_rng(args.dropout_rng)
    use_qkv(args.qkv)
    use_softmax(args.softmax)
    build = bert_tf_step if implementation == "bert_tf" else keras_hub_step
    step, state = build(layers, hidden, args.dtype)
    data = jax.device_put(synthetic_batch(batch, seq_length, predictions))
    args.hold_gpu()  # from the compilation on (see timing_lock)
    start = time.perf_counter()
    for _ in range(args.warmup_steps):
        loss, state = step(state, data)
    jax.block_until_ready(loss)
    warmup = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(args.steps):
        loss, state = step(state, data)
    jax.block_until_ready(loss)
    seconds = time.perf_counter() - start

    def profile() -> None:
        nonlocal loss, state
        trace_dir = os.path.join(args.profile_dir, f"{args.config}_{implementation}")
        with jax.profiler.trace(trace_dir):
            for _ in range(args.profile_steps):
                loss, state = step(state, data)
            jax.block_until_ready(loss)
        # The compiled step's HLO after XLA's passes (from jit's cache: no second compilation):
        # the fusions that the kernel table names.
        hlo_text = step.lower(state, data).compile().as_text()
        with gzip.open(os.path.join(args.profile_dir, f"{args.config}_{implementation}.hlo.gz"),
                       "wt") as f:  # fmt: skip
            f.write(hlo_text)
        trace = glob.glob(os.path.join(trace_dir, "**", "*.trace.json.gz"), recursive=True)
        trace = load_trace(trace[0]) if trace else {"traceEvents": []}
        write_profile(args, implementation, trace, hlo_text)

    result = {"seconds": seconds, "warmup_s": warmup, "loss": float(loss),
              "device": jax.devices()[0].device_kind}  # fmt: skip
    return result, profile


def write_profile(args, implementation: str, trace: dict, hlo_text: str = "") -> None:
    """The worker's kernel table, as `<profile_dir>/<config>_<implementation>.txt`."""
    path = os.path.join(args.profile_dir, f"{args.config}_{implementation}.txt")
    with open(path, "w") as f:
        f.write(summarize(trace, args.profile_steps, hlo_text=hlo_text))


def measure_hf(layers, hidden, seq_length, predictions, batch, args):
    """HF transformers' BertForPreTraining in bf16 autocast, torch.compile'd, fused AdamW; as
    measure_keras, (result, profile)."""
    import torch
    import transformers

    device = "cuda" if torch.cuda.is_available() else "cpu"
    config = transformers.BertConfig(
        vocab_size=VOCAB_SIZE, hidden_size=hidden, num_hidden_layers=layers,
        num_attention_heads=hidden // 64, intermediate_size=4 * hidden,
        attn_implementation="sdpa",
    )  # fmt: skip
    model = transformers.BertForPreTraining(config).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)
    b = {
        k: torch.from_numpy(v).to(device)
        for k, v in synthetic_batch(batch, seq_length, predictions).items()
    }
    labels = torch.full((batch, seq_length), -100, dtype=torch.long, device=device)
    labels.scatter_(1, b["masked_lm_positions"].long(), b["masked_lm_ids"].long())
    autocast = torch.autocast(device, torch.bfloat16, enabled=args.dtype != "float32")

    @torch.compile
    def forward_backward():
        with autocast:
            out = model(input_ids=b["input_ids"].long(), attention_mask=b["input_mask"],
                        token_type_ids=b["segment_ids"].long(), labels=labels,
                        next_sentence_label=b["next_sentence_labels"][:, 0].long())  # fmt: skip
        out.loss.backward()
        return out.loss

    def step():
        loss = forward_backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    args.hold_gpu()
    start = time.perf_counter()
    for _ in range(args.warmup_steps):
        step()
    sync()
    warmup = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    sync()
    seconds = time.perf_counter() - start

    def profile() -> None:
        activities = [torch.profiler.ProfilerActivity.CPU]
        if device == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        with torch.profiler.profile(activities=activities) as profiler:
            for _ in range(args.profile_steps):
                step()
            sync()
        trace = os.path.join(args.profile_dir, f"{args.config}_hf_torch_compile.trace.json")
        profiler.export_chrome_trace(trace)
        write_profile(args, "hf_torch_compile", load_trace(trace))

    name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    return {"seconds": seconds, "warmup_s": warmup, "loss": float(loss), "device": name}, profile


def timing_lock(path: str):
    """An exclusive lock on `path` (none if empty): workers of benchmark runs started side by
    side build their models at once but compile (XLA's autotuning runs kernels on the GPU), time
    and trace one at a time."""
    import fcntl

    if not path:
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def held():
        with open(path, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    return held()


def worker(args) -> None:
    with contextlib.ExitStack() as held:
        args.hold_gpu = lambda: held.enter_context(timing_lock(args.timing_lock))
        measure_and_profile(args)


def measure_and_profile(args) -> None:
    layers, hidden, seq_length, predictions, batch = CONFIGS[args.config]
    batch = args.batch_size or batch
    if args.worker == "hf_torch_compile":
        result, profile = measure_hf(layers, hidden, seq_length, predictions, batch, args)
    else:
        result, profile = measure_keras(
            args.worker, layers, hidden, seq_length, predictions, batch, args
        )
    result["sequences_per_second"] = batch * args.steps / result["seconds"]
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    if args.profile_dir:
        try:  # after the result: a profiler that fails costs the table nothing
            profile()
        except Exception as error:  # noqa: BLE001 - any failure is reported, not raised
            with open(os.path.join(args.profile_dir, f"{args.config}_{args.worker}.txt"), "w") as f:
                f.write(f"profile failed: {type(error).__name__}: {error}\n")


def run_worker(implementation: str, config: str, args) -> dict | str:
    """A fresh process of this script: its result, or why there is none (one line)."""
    needs = {"bert_tf": ["jax"], "keras_hub": ["jax", "keras_hub"],
             "hf_torch_compile": ["torch", "transformers"]}[implementation]  # fmt: skip
    check = subprocess.run([sys.executable, "-c", f"import {', '.join(needs)}"],
                           capture_output=True)  # fmt: skip
    if check.returncode:
        return f"skipped: needs {', '.join(needs)}"
    command = [
        sys.executable, os.path.abspath(__file__), f"--worker={implementation}",
        f"--config={config}", f"--dtype={args.dtype}", f"--steps={args.steps}",
        f"--warmup_steps={args.warmup_steps}", f"--batch_size={args.batch_size}",
        f"--profile_dir={args.profile_dir}", f"--profile_steps={args.profile_steps}",
        f"--dropout_rng={args.dropout_rng}", f"--qkv={args.qkv}", f"--softmax={args.softmax}",
        f"--timing_lock={args.timing_lock}", f"--threefry={args.threefry}",
    ]  # fmt: skip
    env = {**os.environ, "KERAS_BACKEND": "jax", "PYTHONPATH": os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))) + os.pathsep + os.environ.get("PYTHONPATH", "")}  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    for line in result.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX) :])
    return "failed: " + (result.stderr.strip().splitlines() or ["no output"])[-1][:200]


def peak_tflops(device: str) -> float | None:
    for name, peak in BF16_PEAK_TFLOPS.items():  # "H100 PCIe" is tried before "H100"
        if name in device:
            return peak
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default="base128,base512,large128")
    parser.add_argument("--implementations", default=",".join(IMPLEMENTATIONS))
    parser.add_argument("--dtype", default="mixed_bfloat16")
    parser.add_argument("--steps", type=int, default=20, help="timed steps")
    parser.add_argument("--warmup_steps", type=int, default=3)
    parser.add_argument("--batch_size", type=int, default=0, help="0: the config's")
    parser.add_argument("--profile_dir", default="", help="trace each worker's steps here")
    parser.add_argument("--profile_steps", type=int, default=3)
    parser.add_argument("--dropout_rng", choices=("threefry", "rbg"), default="threefry",
                        help="the Keras models' dropout RNG on JAX")  # fmt: skip
    parser.add_argument("--qkv", choices=("separate", "fused"), default="separate",
                        help="ours: Q, K, V as three [H, H] products or one [H, 3H]")  # fmt: skip
    parser.add_argument(
        "--softmax",
        choices=("float32", "compute"),
        default="float32",
        help="ours: the attention softmax in float32 or in the compute dtype",
    )
    parser.add_argument("--threefry", choices=("partitionable", "original"),
                        default="partitionable",
                        help="JAX's threefry bits for the Keras models' dropout masks")  # fmt: skip
    parser.add_argument("--timing_lock", default="",
                        help="a lock file shared by runs started side by side: their workers "
                        "compile, time and trace one at a time")  # fmt: skip
    parser.add_argument("--worker", choices=IMPLEMENTATIONS, help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    if args.profile_dir:
        os.makedirs(args.profile_dir, exist_ok=True)
    print(f"{'config':9} {'implementation':17} {'seq/s':>8} {'TFLOP/s':>8} {'% peak':>7} "
          f"{'vs bert_tf':>10} {'warm-up s':>9}  device")  # fmt: skip
    for config in args.configs.split(","):
        layers, hidden, seq_length, predictions, batch = CONFIGS[config]
        flops = training_flops_per_sequence(layers, hidden, seq_length, predictions)
        ours = None
        for implementation in args.implementations.split(","):
            result = run_worker(implementation, config, args)
            if isinstance(result, str):
                print(f"{config:9} {implementation:17} {result}")
                continue
            rate = result["sequences_per_second"]
            ours = rate if implementation == "bert_tf" else ours
            tflops = rate * flops / 1e12
            peak = peak_tflops(result["device"])
            share = f"{100 * tflops / peak:.0f}%" if peak else "-"
            ratio = f"{rate / ours:.2f}x" if ours else "-"
            print(f"{config:9} {implementation:17} {rate:>8.1f} {tflops:>8.2f} {share:>7} "
                  f"{ratio:>10} {result['warmup_s']:>9.1f}  {result['device']}")  # fmt: skip
    print(f"\ndtype {args.dtype}; Keras dropout RNG {args.dropout_rng} ({args.threefry}); "
          f"ours' QKV {args.qkv}, "
          f"softmax {args.softmax}; "
          f"{args.steps} timed steps "
          f"after {args.warmup_steps} warm-up steps; "
          "TFLOP/s from benchmarks/run_pretraining.py's analytic count (with NSP; the same count "
          "for every implementation)")  # fmt: skip
    if args.profile_dir:
        print_profiles(args)


def print_profiles(args) -> None:
    """Every worker's kernel table, after the results table."""
    for config in args.configs.split(","):
        for implementation in args.implementations.split(","):
            path = os.path.join(args.profile_dir, f"{config}_{implementation}.txt")
            if os.path.exists(path):
                with open(path) as f:
                    print(f"\n## {config} {implementation}: {args.profile_steps} steps traced\n")
                    print(f.read(), end="")


if __name__ == "__main__":
    main()
