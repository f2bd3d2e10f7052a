"""`bert_tf.modeling` is backend-agnostic Keras 3: under JAX (the backend of our GPU numbers;
Keras's numpy backend imports JAX too), in a process that never imports TensorFlow, the encoder
and the pre-training heads give TensorFlow's numbers."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import numpy as np
from conftest import REPO, SCRIPT_ENV, tiny_config_dict

from bert_tf.config import BertConfig
from bert_tf.modeling.pretrainer import BertPretrainer

INPUTS = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions")
OUTPUTS = ("embedding_output", "sequence_output", "pooled_output", "mlm_log_probs", "nsp_log_probs")

# Run as `python -c` under KERAS_BACKEND=jax: argv = the arrays (.npz), the config (JSON),
# where to write the outputs (.npz).
JAX_FORWARD = f"""
import json, sys
import numpy as np
import keras
from bert_tf.config import BertConfig
from bert_tf.modeling.pretrainer import BertPretrainer

assert keras.backend.backend() == "jax", keras.backend.backend()
arrays = np.load(sys.argv[1])
model = BertPretrainer(BertConfig(**json.loads(sys.argv[2])))
model.set_weights([arrays[f"weight_{{i}}"] for i in range(len(model.weights))])
outputs = model({{name: arrays[name] for name in {INPUTS!r}}}, training=False)
assert "tensorflow" not in sys.modules, "bert_tf.modeling imported TensorFlow"
np.savez(sys.argv[3], **{{name: np.asarray(outputs[name]) for name in {OUTPUTS!r}}})
"""


def test_the_jax_backend_gives_tensorflows_outputs_without_importing_tensorflow(tmp_path):
    config = tiny_config_dict(hidden_act="gelu")
    model = BertPretrainer(BertConfig(**config))
    rng = np.random.default_rng(0)
    inputs = {
        "input_ids": rng.integers(0, 99, (3, 16)).astype(np.int32),
        "input_mask": np.array([[1] * 16, [1] * 11 + [0] * 5, [1] * 5 + [0] * 11], np.int32),
        "segment_ids": np.array([[0] * 8 + [1] * 8, [0] * 6 + [1] * 10, [0] * 16], np.int32),
        "masked_lm_positions": np.array([[1, 7, 12], [2, 3, 0], [4, 0, 0]], np.int32),
    }
    weights = {f"weight_{i}": np.asarray(w) for i, w in enumerate(model.weights)}
    np.savez(tmp_path / "arrays.npz", **inputs, **weights)
    expected = model(inputs, training=False)

    result = subprocess.run(
        [sys.executable, "-c", JAX_FORWARD, str(tmp_path / "arrays.npz"), json.dumps(config),
         str(tmp_path / "jax.npz")],
        cwd=REPO, env={**SCRIPT_ENV, "KERAS_BACKEND": "jax"}, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    got = np.load(tmp_path / "jax.npz")
    for name in OUTPUTS:
        np.testing.assert_allclose(got[name], np.asarray(expected[name]), atol=1e-5, err_msg=name)


def test_the_gpu_benchmark_trains_ours_under_jax(tmp_path):
    # benchmarks/gpu_pretraining.py runs on GPU machines without TensorFlow: here on the CPU,
    # one step of a tiny config, only for the table's row (no timing is checked), then one
    # traced step: a CPU trace has no GPU kernels, but the worker's profile files are written.
    # With the variants measured on the GPU (bfloat16 softmax, threefry's original bits) and the
    # lock that runs started side by side share.
    result = subprocess.run(
        [sys.executable, "benchmarks/gpu_pretraining.py", "--configs=tiny128", "--steps=1",
         "--warmup_steps=1", "--implementations=bert_tf", f"--profile_dir={tmp_path}",
         "--profile_steps=1", "--softmax=compute", "--threefry=original",
         f"--timing_lock={tmp_path / 'lock'}"],
        cwd=REPO, env=SCRIPT_ENV, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    row = next(line for line in result.stdout.splitlines() if line.startswith("tiny128"))
    assert row.split()[1] == "bert_tf" and float(row.split()[2]) > 0, result.stdout
    assert "threefry (original); ours' QKV separate, softmax compute;" in result.stdout
    assert "## tiny128 bert_tf: 1 steps traced" in result.stdout
    assert (tmp_path / "tiny128_bert_tf.txt").read_text().startswith("no GPU kernels")
    with gzip.open(tmp_path / "tiny128_bert_tf.hlo.gz", "rt") as f:
        assert f.readline().startswith("HloModule jit_step")


# The benchmark's fused QKV layout (benchmarks/gpu_pretraining.py --qkv=fused), on the JAX
# backend as the benchmark runs it: prints the largest difference from ours' three products
# over every output of the pre-training model, and the attention's variables after it.
FUSED_QKV = """
import json, sys
import numpy as np
sys.path.insert(0, "benchmarks")
import keras
from gpu_pretraining import synthetic_batch, use_qkv
from bert_tf.config import BertConfig
from bert_tf.modeling.pretrainer import BertPretrainer
keras.utils.set_random_seed(0)
model = BertPretrainer(BertConfig(vocab_size=30522, hidden_size=128, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=512))
batch = synthetic_batch(4, 32, 5)
inputs = {name: batch[name] for name in model.input}
separate = model(inputs, training=False)
use_qkv("fused")
fused = model(inputs, training=False)
print(max(float(np.max(np.abs(np.asarray(separate[k]) - np.asarray(fused[k])))) for k in fused))
print(json.dumps(sorted({v.path.split("/")[-2] for v in model.weights if "attention" in v.path})))
"""


def test_the_gpu_benchmarks_fused_qkv_computes_what_the_three_products_do():
    result = subprocess.run(
        [sys.executable, "-c", FUSED_QKV], cwd=REPO,
        env={**SCRIPT_ENV, "KERAS_BACKEND": "jax"}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    difference, variables = result.stdout.strip().splitlines()[-2:]
    assert float(difference) < 1e-5
    assert {"query", "key", "value"} <= set(json.loads(variables))


# Two runs of the benchmark started side by side share a lock file: while one worker holds it,
# another cannot take it. In its own process, as the benchmark's modules shadow the scripts'.
TIMING_LOCK = """
import fcntl, subprocess, sys
sys.path.insert(0, "benchmarks")
from gpu_pretraining import timing_lock
TRY = ("import fcntl, sys; f = open(sys.argv[1], 'a')\\n"
       "try: fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\\nexcept OSError: sys.exit(3)")
with timing_lock(sys.argv[1]):
    held = subprocess.run([sys.executable, "-c", TRY, sys.argv[1]]).returncode
free = subprocess.run([sys.executable, "-c", TRY, sys.argv[1]]).returncode
print(held, free)
"""


def test_the_gpu_benchmarks_timing_lock_lets_one_worker_at_a_time_hold_the_gpu(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", TIMING_LOCK, str(tmp_path / "lock")], cwd=REPO, env=SCRIPT_ENV,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-2:] == ["3", "0"]
