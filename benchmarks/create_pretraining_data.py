"""Speed and memory of create_pretraining_data.py, default mode and per-file workers.

    python benchmarks/create_pretraining_data.py [--corpus_dir=../shared/oracle/pretraining/corpus]

Runs the script as users do (a fresh process each, TensorFlow-free start-up included) on the
corpus with the settings of the original's benchmark (dupe_factor 10, 128 tokens, 20
predictions) and prints records/s, wall time and peak memory. The original implementation cannot
be run here (it is not a dependency); its row is the measurement given in issue 3, taken on
this machine kind with the same corpus and flags.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_CORPUS = os.path.join(REPO, "..", "shared", "oracle", "pretraining", "corpus")
ORIGINAL = {"records": 16449, "wall_s": 8.0, "peak_mb": 630.0}  # issue 3, same machine kind


def run(corpus: list[str], extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as out:
        command = [
            sys.executable,
            os.path.join(REPO, "create_pretraining_data.py"),
            "--input_file=" + ",".join(corpus),
            f"--output_file={out}/records.tfrecord",
            "--vocab_file=" + os.path.join(REPO, "sample_data", "vocab.txt"),
            "--dupe_factor=10",
            "--max_seq_length=128",
            "--max_predictions_per_seq=20",
            *extra,
        ]
        start = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - start
    records = int(re.search(r"Wrote (\d+) records", result.stderr).group(1))
    # ru_maxrss of the largest process waited for so far (KiB on Linux): the script, or a worker.
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"records": records, "wall_s": wall, "peak_mb": peak_mb}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus_dir", default=SHARED_CORPUS)
    args = parser.parse_args()
    corpus = sorted(glob.glob(os.path.join(args.corpus_dir, "*.txt")))
    if not corpus:
        sys.exit(f"--corpus_dir={args.corpus_dir}: no *.txt files (../shared absent?)")
    size_mb = sum(os.path.getsize(p) for p in corpus) / 1e6
    cores = os.cpu_count()
    print(f"corpus: {len(corpus)} files, {size_mb:.2f} MB; dupe_factor 10, 128/20; {cores} cores")
    rows = [("original (issue 3 measurement)", ORIGINAL)]
    rows.append(("bert_tf, default (identical records)", run(corpus, [])))
    rows.append(("bert_tf, --num_workers=2 (per file)", run(corpus, ["--num_workers=2"])))
    print(
        f"{'run':40} {'records':>8} {'records/s':>10} {'wall s':>7} {'peak MB':>8} {'speed-up':>8}"
    )
    for name, r in rows:
        print(
            f"{name:40} {r['records']:8d} {r['records'] / r['wall_s']:10.0f} {r['wall_s']:7.2f} "
            f"{r['peak_mb']:8.0f} {ORIGINAL['wall_s'] / r['wall_s']:7.1f}x"
        )


if __name__ == "__main__":
    main()
