"""The record of every run behind the tables (docs/reproduction/runs.tsv): a line per
fine-tuning run (or per measurement of a pre-trained model, such as its held-out perplexity),
from which every cell of ours, its spread and its chosen learning rate is derived.

A line is one run (`runs` 1), or, where a run's value was lost with the machine that ran it and
only the cell's mean and spread over its restarts survive, one line for those restarts
(`runs` n, `source` aggregate). Either way `Cell.pooled` combines them exactly.

    lines = read_runs("docs/reproduction/runs.tsv")
    cells(lines, "long40k", "table5")[("BERT", "QNLI")]   # Cell(n=3, mean=66.3, ...)
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math

from bert_tf.io.fileio import read_text
from reproduction.verdicts import Cell

HEADER = (
    "schedule",  # the reproduce.py --size that gave it
    "table",  # the table (or figure) of the paper the run is a cell of
    "row",
    "column",
    "seed",  # the pre-training seed of the model fine-tuned (1, 2, ...)
    "lr",  # the fine-tuning learning rate ("-": the task kind's only one)
    "restart",  # the fine-tuning restart (its --seed); "-" on an aggregate line
    "value",  # the run's metric, as the table's column gives it (the mean on an aggregate line)
    "runs",  # 1, or the restarts an aggregate line stands for
    "spread",  # an aggregate line's sample standard deviation; "-" otherwise
    "source",  # run: the run's own value; aggregate: only the mean and spread survive
)
RUN, AGGREGATE = "run", "aggregate"
RUNS_FILE = "runs.tsv"  # the record's name, in docs/reproduction/ and OUT/tables/
# The column a learning rate is chosen by, where not its own (Table 1 chose one MNLI model for
# both its columns, on MNLI-m; Table 7 chose its rate on Dev).
SELECTED_BY = {"MNLI-mm": "MNLI-m", "Test F1": "Dev F1"}


def figure(value) -> str:
    """A number as every table of ours writes it: one decimal from 10 up, two below; "-" for
    none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return str(value)


def described(cell: Cell) -> str:
    """A cell as the pages quote it: mean, ±spread where known, and (runs)."""
    spread = f" ±{figure(cell.spread)}" if cell.spread is not None else ""
    return f"{figure(cell.mean)}{spread} ({cell.n})"


def read_runs(path: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(read_text(path, "a record of runs")), delimiter="\t"))


def format_runs(lines: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, HEADER, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: line[key] for key in HEADER} for line in lines)
    return out.getvalue()


def key(line: dict) -> tuple:
    """What identifies a run: a new line with the same key replaces the old (a rerun)."""
    return tuple(line[name] for name in HEADER[:7])


def merged(record: list[dict], new: list[dict]) -> list[dict]:
    """`record` with `new`'s lines added, each replacing the line of the same run; an aggregate
    line gives way to the runs of the same cell, seed and rate that it stood for."""
    fresh = {key(line) for line in new}
    covered = {key(line)[:6] for line in new if line["source"] == RUN}
    kept = [
        line
        for line in record
        if key(line) not in fresh and not (line["source"] == AGGREGATE and key(line)[:6] in covered)
    ]
    return kept + new


def _part(line: dict) -> Cell:
    spread = None if line["spread"] in ("-", "") else float(line["spread"])
    return Cell(int(line["runs"]), float(line["value"]), spread)


def cells(
    lines: list[dict], schedule: str, table: str, seeds: tuple[str, ...] | None = None
) -> dict[tuple[str, str], Cell]:
    """{(row, column): Cell} of `table` at `schedule`: for each pre-training seed (of `seeds`
    where given), the runs at the learning rate with the best mean on its column (or
    `SELECTED_BY`'s), as the paper chose a rate per model; then every seed's chosen runs
    pooled."""
    groups: dict = {}  # (row, column) -> seed -> lr -> [Cell of a line, ...]
    for line in lines:
        if (line["schedule"], line["table"]) == (schedule, table) and (
            seeds is None or line["seed"] in seeds
        ):
            by_seed = groups.setdefault((line["row"], line["column"]), {})
            by_seed.setdefault(line["seed"], {}).setdefault(line["lr"], []).append(_part(line))
    found = {}
    for (row, column), by_seed in groups.items():
        chosen = []
        selector = groups.get((row, SELECTED_BY.get(column, column)), by_seed)
        for seed, by_lr in by_seed.items():
            judged = selector.get(seed, by_lr)
            lr = max(by_lr, key=lambda rate: Cell.pooled(judged.get(rate, by_lr[rate])).mean)
            chosen.append(dataclasses.replace(Cell.pooled(by_lr[lr]), seeds=1))
        found[(row, column)] = Cell.pooled(chosen)
    return found
