"""benchmarks/serving.py: the serving benchmark runs end to end as typed (ours and the matmul
floor; the peers need their own environment), and its table's ratios are to the fastest peer
of the same precision. benchmarks/serving_batching.py: TF Serving's batching parameters read
as TF Serving reads them, and concurrent requests answered with and without them."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from conftest import REPO, run_script, succeeded, tiny_config, write_tsv

# By its path: benchmarks/ on sys.path would shadow the top-level scripts that other tests
# import by name.
_spec = importlib.util.spec_from_file_location("serving", REPO / "benchmarks" / "serving.py")
serving = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(serving)
_spec = importlib.util.spec_from_file_location(
    "serving_batching", REPO / "benchmarks" / "serving_batching.py"
)
serving_batching = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(serving_batching)
PARAMETERS = REPO / "docs" / "batching_parameters.txt"

PAIRS = [
    ("The company said profits rose in the third quarter.", "Profits rose, the company said."),
    ("Shares fell sharply after the announcement.", "The team won its fourth straight game."),
    ("He told reporters the deal would close next year.", "The deal closes next year, he said."),
]


def test_the_benchmark_times_our_exports_and_the_floor_with_a_tiny_model(tmp_path: Path):
    data = tmp_path / "MRPC"
    rows = [["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]]
    rows += [[str(i % 2), str(i), str(i + 1), a, b] for i, (a, b) in enumerate(PAIRS * 4)]
    write_tsv(data / "train.tsv", rows)
    write_tsv(data / "dev.tsv", rows[:4])
    config = tmp_path / "bert_config.json"
    tiny_config().to_json_file(str(config))
    work = tmp_path / "work"
    result = succeeded(run_script(
        "benchmarks/serving.py", f"--mrpc_dev={data / 'dev.tsv'}", f"--bert_config_file={config}",
        "--num_train_epochs=1", "--max_seq_length=32", "--runtimes=ours,floor",
        f"--work_dir={work}", timeout=900,
    ))  # fmt: skip
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [(row[0], row[1]) for row in rows[1:]] == [
        ("| ours", "float32"), ("| floor", "float32"),
        ("| ours", "bfloat16"), ("| floor", "bfloat16"),
    ]  # fmt: skip
    assert "3 MRPC Dev pairs" in result.stdout
    assert "ours bfloat16 = ours float32 on" in result.stdout
    reports = json.loads((work / "serving.json").read_text())
    for name in ("ours float32", "ours bfloat16", "floor float32", "floor bfloat16"):
        report = reports[name]
        assert 0 < report["median_ms"] <= report["p90_ms"] and report["batch_per_s"] > 0, name
        assert len(report["labels"]) == 3 and report["first_ms"] > 0, name
    # Both exports wrote TF Serving's warm-up file, which the worker replayed before timing.
    assert (work / "export_bfloat16" / "assets.extra" / "tf_serving_warmup_requests").is_file()

    # Two exports taking turns on each pair (here one export against itself: same labels).
    result = succeeded(run_script(
        "benchmarks/serving_tf.py", f"--pairs={work / 'pairs.json'}",
        f"--export_dir={work / 'export_float32'}", f"--against={work / 'export_float32'}",
    ))  # fmt: skip
    turns = json.loads(result.stdout.splitlines()[-1])
    assert turns["pairs"] == 3 and turns["labels_agree"] == 3
    assert min(turns["median_ms"]) > 0 and turns["ratio"] > 0

    # An earlier run's exports are timed beside this run's (here the same run's, reused).
    result = succeeded(run_script(
        "benchmarks/serving.py", f"--mrpc_dev={data / 'dev.tsv'}", f"--bert_config_file={config}",
        "--max_seq_length=32", "--runtimes=ours", f"--work_dir={work}",
        f"--baseline_exports={work}", timeout=600,
    ))  # fmt: skip
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [(row[0], row[1]) for row in rows[1:]] == [
        ("| ours", "float32"), ("| baseline", "float32"),
        ("| ours", "bfloat16"), ("| baseline", "bfloat16"),
    ]  # fmt: skip

    # The export serves concurrent clients through docs/batching_parameters.txt, and without.
    result = succeeded(run_script(
        "benchmarks/serving_batching.py", f"--export_dir={work / 'export_float32'}",
        f"--mrpc_dev={data / 'dev.tsv'}", f"--batching_parameters_file={PARAMETERS}",
        "--clients=1,2", timeout=600,
    ))  # fmt: skip
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [(row[0], row[1]) for row in rows[1:]] == [
        ("| none", "1"), (f"| {PARAMETERS}", "1"), ("| none", "2"), (f"| {PARAMETERS}", "2"),
    ]  # fmt: skip
    assert all(float(row[2]) > 0 for row in rows[1:])


def test_baseline_exports_that_are_not_an_earlier_runs_work_dir_are_refused_naming_them(
    tmp_path: Path,
):
    result = run_script(
        "benchmarks/serving.py", f"--mrpc_dev={tmp_path / 'dev.tsv'}",
        f"--baseline_exports={tmp_path}", f"--work_dir={tmp_path / 'work'}", timeout=120,
    )  # fmt: skip
    assert result.returncode != 0
    assert f"--baseline_exports={tmp_path} has no {tmp_path}/export_float32" in result.stderr
    assert not (tmp_path / "work").exists()  # refused before any model is made


def test_against_without_an_export_to_compare_is_refused_naming_both_flags(tmp_path: Path):
    result = run_script(
        "benchmarks/serving_tf.py", f"--pairs={tmp_path / 'pairs.json'}",
        f"--against={tmp_path / 'old'}", timeout=120,
    )  # fmt: skip
    assert result.returncode != 0
    assert f"--against={tmp_path / 'old'} compares an export with --export_dir" in result.stderr


def report(median: float, rate: float) -> dict:
    return {"median_ms": median, "p90_ms": median, "first_ms": median, "batch_per_s": rate}


def test_each_row_is_compared_with_the_fastest_peer_of_its_precision_and_the_floor():
    results = {
        ("ours", "float32"): report(60.0, 10.0),
        ("floor", "float32"): report(50.0, 12.0),
        ("torch", "float32"): report(100.0, 8.0),
        ("openvino", "float32"): report(40.0, 20.0),
        ("ours", "bfloat16"): report(30.0, 30.0),
        ("openvino", "bfloat16"): report(20.0, 15.0),
    }
    rows = {tuple(c.strip() for c in line.split("|")[1:3]): line.split("|")[7:10]
            for line in serving.table(results)[2:]}  # fmt: skip
    assert [c.strip() for c in rows["ours", "float32"]] == ["1.50x", "1.20x", "2.00x"]
    assert [c.strip() for c in rows["torch", "float32"]] == ["2.50x", "2.00x", "2.50x"]
    # No floor measured at bfloat16: its ratio is "-"; the fastest peer is bfloat16's own.
    assert [c.strip() for c in rows["ours", "bfloat16"]] == ["1.50x", "-", "0.50x"]


def test_the_batching_parameters_are_read_as_tf_serving_writes_them(tmp_path: Path):
    assert serving_batching.read_parameters(str(PARAMETERS)) == {
        "max_batch_size": 8, "batch_timeout_micros": 0, "num_batch_threads": 1,
        "max_enqueued_batches": 100, "allowed_batch_sizes": [],
    }  # fmt: skip
    path = tmp_path / "batching.txt"
    path.write_text(
        "num_batch_threads { value: 2 }  # a comment\nmax_batch_size { value: 16 }\n"
        "allowed_batch_sizes: 4\nallowed_batch_sizes: 16\npad_variable_length_inputs: true\n"
        'thread_pool_name { value: "batch" }\n'
    )
    read = serving_batching.read_parameters(str(path))
    assert read["num_batch_threads"] == 2 and read["allowed_batch_sizes"] == [4, 16]
    assert read["max_enqueued_batches"] == 10  # TF Serving's default where the file is silent
    path.write_text("")
    assert serving_batching.read_parameters(str(path))["num_batch_threads"] == os.cpu_count()


def test_a_batching_file_tf_serving_would_refuse_is_refused_in_one_line_naming_it(tmp_path: Path):
    path = tmp_path / "batching.txt"
    for text, said in [
        ("num_batch_threads { value: 2 }\nmax_batch_sise { value: 8 }", "'max_batch_sise {"),
        ("max_batch_size { value: 8 }\nallowed_batch_sizes: 4", "ends at 4; expected .* 8"),
        ("num_batch_threads { value: two }", "two }'; expected a whole number"),
    ]:
        path.write_text(text)
        with pytest.raises(SystemExit, match=f"--batching_parameters_file={path}: .*{said}"):
            serving_batching.read_parameters(str(path))
