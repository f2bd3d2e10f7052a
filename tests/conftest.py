"""Shared test fixtures: where the repo's fixture copies and ../shared/oracle live."""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before TensorFlow is first imported

import functools  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import script_runner  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
ORACLE_FIXTURES = FIXTURES / "oracle"
SHARED_ORACLE = REPO.parent / "shared" / "oracle"
SAMPLE_DATA = REPO / "sample_data"
# The original's tokenization cases and vocabs (tests/fixtures/tokenization).
CASES_FILE = FIXTURES / "tokenization" / "cases.jsonl"
CASED_VOCAB = FIXTURES / "tokenization" / "cased_test_vocab.txt"
UNCASED_VOCAB = SAMPLE_DATA / "vocab.txt"
# The vocab of each casing the oracle cases hold tokens and ids for.
CASINGS = [("uncased", UNCASED_VOCAB, True), ("cased", CASED_VOCAB, False)]


def tokenization_cases() -> list[dict]:
    """The original's tokenization cases: each text with its tokens and ids in both casings."""
    with open(CASES_FILE, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# The columns of GLUE's STS-B files.
STS_B_HEADER = [
    "index", "genre", "filename", "year", "old_index", "source1", "source2", "sentence1",
    "sentence2", "score",
]  # fmt: skip
# SQuAD files the original's run_squad.py was run on (tests/fixtures/squad): name -> (file,
# is_training, version_2_with_negative).
SQUAD_FIXTURES = FIXTURES / "squad"
SQUAD_FEATURE_SETS = {
    "v1_predict": ("v1_sample.json", False, False),
    "v1_train": ("v1_train_sample.json", True, False),
    "v2_predict": ("v2_sample.json", False, True),
    "v2_train": ("v2_train_sample.json", True, True),
}

SCRIPT_ENV = {
    **os.environ,
    "TF_CPP_MIN_LOG_LEVEL": "2",
    # Shell scripts call `python`: the one running the tests.
    "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
}

# What TensorFlow's C++ runtime prints at start-up whatever TF_CPP_MIN_LOG_LEVEL says (absl logs
# written before absl::InitializeLog), and absl-formatted log lines: not the script's message.
_LOG_LINE = re.compile(
    r"^(WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    r"|[IWEF]\d{4} [\d:.]+ +\d+ \S+:\d+\] "
    r"|To enable the following instructions:)"
)


def run_script(
    *args: str,
    timeout: float = 300,
    env: dict | None = None,
    program: str = sys.executable,
    fresh: bool = False,
):
    """Runs `python *args` (or `program *args`: bash for the shell scripts) from the
    repository root, as a user would: a Python file in a process forked from one that has
    imported TensorFlow (script_runner.py says what that keeps the same) unless `fresh`,
    anything else in a process of its own."""
    env = {**SCRIPT_ENV, **(env or {})}
    if not fresh and program == sys.executable and script_runner.can_run(list(args), env):
        return script_runner.run(list(args), env=env, cwd=REPO, timeout=timeout)
    return subprocess.run(
        [program, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def sample_pretraining_records(path: Path, seq: int = 64, predictions: int = 10) -> Path:
    """create_pretraining_data.py's records of the sample text at `path` (dupe factor 2)."""
    result = run_script(
        "create_pretraining_data.py",
        f"--input_file={SAMPLE_DATA / 'sample_text.txt'}",
        f"--output_file={path}",
        f"--vocab_file={SAMPLE_DATA / 'vocab.txt'}",
        f"--max_seq_length={seq}",
        f"--max_predictions_per_seq={predictions}",
        "--dupe_factor=2",
    )
    assert result.returncode == 0, result.stderr
    return path


def start_workers(args: list[str], logs: list[Path]) -> list[subprocess.Popen]:
    """`python *args` as one local multi-worker group, a worker per log file (its stderr; its
    TF_CONFIG on free ports, worker 0 the chief), as scripts/local_cluster.py starts them."""
    from bert_tf.training.local_cluster import free_ports, tf_config

    ports = free_ports(len(logs))
    return [
        subprocess.Popen(
            [sys.executable, *args, "--distribution_strategy=multi_worker_mirrored"],
            cwd=REPO,
            env={**SCRIPT_ENV, "TF_CONFIG": tf_config(ports, index)},
            stdout=subprocess.DEVNULL,
            stderr=log.open("w"),
        )
        for index, log in enumerate(logs)
    ]


def take_ctrl_c() -> None:
    """For a child process: SIGINT's default, as under a terminal, even where these tests run
    as a shell's background job (which starts them ignoring SIGINT, and Python then too)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def sigterm_during_training(
    args: list[str], last_line_before: str, signal_number: int = signal.SIGTERM
) -> tuple[int, str]:
    """Starts `python *args`, sends SIGTERM (or `signal_number`) a few seconds after the log
    line that starts with `last_line_before` (the script's last before its loop of steps); its
    exit status and stderr."""
    process = subprocess.Popen(
        [sys.executable, *args], cwd=REPO, env=SCRIPT_ENV, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, preexec_fn=take_ctrl_c,
    )  # fmt: skip
    try:
        for line in process.stderr:
            if line.split("] ")[-1].startswith(last_line_before):
                break
        time.sleep(3)  # into the loop of steps
        process.send_signal(signal_number)
        # A bound for a hang only: the first step's graph may still be tracing when the signal
        # comes, and tracing, that step, the save and the exit took 15 s on 2 loaded cores.
        try:
            _, stderr = process.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            # Once in CI under load (2026-12-03): what the run said tells a loop that never
            # stopped from an exit that never ended.
            process.kill()
            _, stderr = process.communicate()
            pytest.fail(f"no exit within 600 s of the signal; its stderr ends:\n{stderr[-3000:]}")
    finally:
        process.kill()
    return process.returncode, stderr


def succeeded(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    """`result`, once checked that the command succeeded (else its output's tail)."""
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result


def fine_tuning_args(script: str, config_file, output_dir, *extra: str, **flags) -> list[str]:
    """A fine-tuning script's command line for a tiny model: the sample vocab, batches of 4,
    one epoch at lr 1e-3, seed 1; `flags` add to these or replace them (None: leave out),
    `extra` come last."""
    values = {
        "vocab_file": SAMPLE_DATA / "vocab.txt",
        "bert_config_file": config_file,
        "output_dir": output_dir,
        "train_batch_size": 4,
        "eval_batch_size": 4,
        "predict_batch_size": 4,
        "num_train_epochs": 1,
        "learning_rate": 1e-3,
        "seed": 1,
        **flags,
    }
    return [script, *(f"--{k}={v}" for k, v in values.items() if v is not None), *extra]


def trained_and_exported(args, output_dir, export_dir) -> subprocess.CompletedProcess:
    """A fine-tuning script's command line `args(output_dir, *flags)` run to train, evaluate,
    predict and export into `export_dir`; its finished process."""
    flags = ("--do_train", "--do_eval", "--do_predict", f"--export_dir={export_dir}")
    result = run_script(*args(output_dir, *flags), timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def served_json(code: str, *args: str, cwd) -> dict:
    """Runs `python -c code *args` in `cwd`, away from the repository (PYTHONPATH empty: a
    SavedModel must load without bert_tf), and returns the JSON of its last line."""
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env={**SCRIPT_ENV, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


def error_line(result: subprocess.CompletedProcess, program: str) -> str:
    """Checks a failed run said exactly one `program: error: ...` line, last, and returns it."""
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    ours = [line for line in result.stderr.splitlines() if not _LOG_LINE.match(line)]
    assert len(ours) == 1, result.stderr
    last = result.stderr.splitlines()[-1]
    assert last == ours[0]
    assert last.startswith(f"{program}: error: "), last
    return last


def oracle_loss_names(losses: dict) -> dict:
    """`pretraining_loss`'s keys as the oracle names them."""
    return {
        "mlm_loss": losses["masked_lm_loss"],
        "nsp_loss": losses["next_sentence_loss"],
        "total_loss": losses["loss"],
    }


@pytest.fixture
def shared_oracle() -> Path:
    """../shared/oracle; tests that need it skip where it is absent."""
    if not SHARED_ORACLE.is_dir():
        pytest.skip("../shared/oracle is absent")
    return SHARED_ORACLE


@pytest.fixture(scope="session")
def oracle_inputs() -> dict[str, np.ndarray]:
    """The oracle's batch: 4 sequences of 16 tokens, 3 masked positions each."""
    return dict(np.load(ORACLE_FIXTURES / "model" / "inputs.npz"))


@pytest.fixture(scope="session")
def oracle_checkpoint() -> str:
    """The original-format checkpoint (46 variables) the oracle outputs were computed with."""
    return str(ORACLE_FIXTURES / "model" / "init" / "bert_model.ckpt")


def tiny_config_dict(**overrides) -> dict:
    """A small architecture for fast tests (the original's modeling_test sizes, 2 layers)."""
    values = dict(
        vocab_size=99,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        hidden_act="gelu",
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
        max_position_embeddings=64,
        type_vocab_size=2,
        initializer_range=0.02,
    )
    values.update(overrides)
    return values


def tiny_config():
    """A 2-layer, hidden-32 BertConfig over the released uncased vocab (sample_data/vocab.txt),
    for end-to-end script tests that only need a model that runs fast."""
    from bert_tf.config import BertConfig

    return BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        type_vocab_size=2,
    )


def write_tsv(path, rows) -> None:
    """A tab-separated file of `rows` (lists of cells), as GLUE's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join("\t".join(row) + "\n" for row in rows), encoding="utf-8")


@functools.cache
def recorded_cells(table: str, schedule: str) -> dict:
    """{(row, column): Cell} of the committed record of runs (docs/reproduction/runs.tsv) of
    `table` at `schedule`, as the pages derive them (every pre-training seed pooled)."""
    if str(REPO / "scripts" / "paper") not in sys.path:
        sys.path.insert(0, str(REPO / "scripts" / "paper"))
    from reproduction.record import cells, read_runs

    return cells(read_runs(str(REPO / "docs" / "reproduction" / "runs.tsv")), schedule, table)


def squad_features(name: str, max_seq_length: int = 96):
    """Our examples and windows of a SQuAD fixture file (SQUAD_FEATURE_SETS), with the
    settings the original was run with (doc_stride 32, max_query_length 16)."""
    from bert_tf.squad.data import read_squad_examples, read_squad_file
    from bert_tf.squad.features import convert_examples_to_features
    from bert_tf.tokenization import FullTokenizer

    file, is_training, version_2 = SQUAD_FEATURE_SETS[name]
    examples = read_squad_examples(
        read_squad_file(str(SQUAD_FIXTURES / file)), file, is_training, version_2
    )
    tokenizer = FullTokenizer(str(UNCASED_VOCAB), do_lower_case=True)
    features = list(
        convert_examples_to_features(examples, tokenizer, max_seq_length, 32, 16, is_training)
    )
    return examples, features


def recipe_logits(unique_id: int) -> tuple[np.ndarray, np.ndarray]:
    """The SQuAD fixtures' logits of a window: seeded by its unique_id, float32 [96] each."""
    rng = np.random.default_rng(unique_id)
    start = rng.normal(size=96) * 3
    end = rng.normal(size=96) * 3
    return start.astype(np.float32), end.astype(np.float32)


def tiny_pretraining_config():
    """A tiny BertConfig without dropout (deterministic training-loop tests)."""
    from bert_tf.config import BertConfig

    return BertConfig(**tiny_config_dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))


def record_batch(batch: int = 4, seq: int = 12, predictions: int = 3, seed: int = 0) -> dict:
    """Pre-training features as the input pipeline gives them: int32, padded predictions
    with weight 0 (for `tiny_pretraining_config()`'s vocab)."""
    vocab_size = tiny_pretraining_config().vocab_size
    rng = np.random.default_rng(seed)
    input_ids = rng.integers(5, vocab_size, (batch, seq)).astype(np.int32)
    input_mask = np.ones((batch, seq), np.int32)
    input_mask[:, -2:] = 0
    positions = np.stack(
        [rng.choice(np.arange(1, seq - 2), predictions, replace=False) for _ in range(batch)]
    ).astype(np.int32)
    weights = np.ones((batch, predictions), np.float32)
    weights[0, -1] = 0.0
    positions[0, -1] = 0
    return {
        "input_ids": input_ids,
        "input_mask": input_mask,
        "segment_ids": np.zeros((batch, seq), np.int32),
        "masked_lm_positions": positions,
        "masked_lm_ids": rng.integers(5, vocab_size, (batch, predictions)).astype(np.int32),
        "masked_lm_weights": weights,
        "next_sentence_labels": rng.integers(0, 2, (batch, 1)).astype(np.int32),
    }


@pytest.fixture
def ram_url() -> str:
    """A new, empty folder at a URL: TensorFlow's in-memory file system (ram://), which every
    path reader of ours treats as it treats gs://."""
    import uuid

    import tensorflow as tf

    url = f"ram://bert_tf_{uuid.uuid4().hex}"
    tf.io.gfile.makedirs(url)
    return url


@pytest.fixture
def mounted_disk(tmp_path):
    """`mounted_disk(size, read_only=False)`: a folder on a tmpfs of `size` (e.g. "64k"), a
    real full or read-only disk; skips where mounting is not permitted (not root, a container
    without the capability), where the in-process tests of the same paths still run."""
    mounts = []

    def mount(size: str, read_only: bool = False) -> Path:
        folder = tmp_path / f"disk{len(mounts)}"
        folder.mkdir()
        options = f"size={size}" + (",ro" if read_only else "")
        if not shutil.which("mount"):
            pytest.skip("cannot mount a tmpfs here: no mount command")
        made = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
            capture_output=True,
            text=True,
        )
        if made.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip() or made.returncode}")
        mounts.append(folder)
        return folder

    yield mount
    for folder in mounts:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)
