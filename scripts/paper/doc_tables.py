"""Writes the reproduction record's generated blocks (docs/REPRODUCTION.md and
docs/reproduction/*.md) from the TSVs in docs/reproduction/, so that every number of ours on a
page, its spread and every verdict are computed, none written by hand:

    python scripts/paper/doc_tables.py           # rewrite each <!-- begin NAME --> block
    python scripts/paper/doc_tables.py --verify   # exit 1, naming the block, where one differs

and each number of ours quoted in prose as `<!-- cell:TABLE|SCHEDULE|ROW|COLUMN -->` (QUOTE).

The blocks, by NAME:
- `table5` (any table's TSV name): the table, a line per row and column: the paper's number,
  then ours at each schedule the TSV has, a column each (`mean ±spread (runs)` from the record
  of runs, runs.tsv, where it has the cell; else the TSV's number; `-` where pending). Its
  title's "(...)" names the schedules; lines after the table (notes) are kept as written.
- `verdicts_table5`: each of claims.CLAIMS on the table, a line per column: the paper's two
  numbers, ours, the floor, the verdict by verdicts.RULE.
- `summary`: a line per claim, its headline column (the record's first screen).
- `rule`: verdicts.RULE.
- `seed_changes`: the verdicts that a second pre-training seed's runs changed.
- `pretraining_seeds`: `long40k`'s pre-trainings run with more than one seed, a line per run
  (each seed, and the same-seed reruns), their held-out numbers from pretraining.tsv.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import os
import re

from reproduction.claims import CLAIMS, NOT_COMPARED, UNCOMPARED, Claim, read
from reproduction.pretraining import Pretraining
from reproduction.record import (
    HEADER,
    RUNS_FILE,
    cells,
    described,
    figure,
    format_runs,
    merged,
    read_runs,
)
from reproduction.verdicts import RULE

from bert_tf import cli
from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import atomic_write_text, read_text
from bert_tf.options import Options, check_options, option, options

BLOCK = re.compile(r"(<!-- begin (\w+) -->\n)(.*?)(<!-- end \2 -->)", re.S)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The title's account of the columns, as reproduce.py writes it ("(ours / paper)") or as here.
ACCOUNT = re.compile(r"\((?:ours[^()]*/ paper|the paper's, then ours[^()]*)\)")
VERDICTS = "verdicts_"
# A number of ours quoted in prose, by the cell it is: `<!-- cell:table5|long40k|BERT|QNLI -->`
# then the cell as the tables give it (mean ±spread (runs)), or with `mean:` its mean alone,
# then `<!-- /cell -->` (`<!-- /mean -->`). Written from the record like the blocks, so that a
# number quoted for another row or column than its own cannot stand.
QUOTE = re.compile(r"(<!-- (cell|mean):([^>\n]+?) -->)(.*?)(<!-- /\2 -->)", re.S)
OPENED = re.compile(r"<!-- (?:cell|mean):")
# The paper's tables and figure, in its order: the summary's.
PAGES = [f"table{n}" for n in range(1, 9)] + ["figure5"]
# A pre-training run again with its own seed and records on another machine (pretraining.tsv).
RERUN = "_rerun"
OBJECTIVES = {"mlm_nsp": "masked LM + NSP", "mlm": "masked LM", "ltr": "left-to-right LM"}


def read_rows(path: str) -> list[dict]:
    """The TSV's cells as dicts (schedule, row, column, ours, paper_row, paper, spread, lr)."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


class Record:
    """The TSVs of docs/reproduction/: the tables' and the record of runs."""

    def __init__(self, tsv_dir: str) -> None:
        self.tsv_dir = tsv_dir
        runs = os.path.join(tsv_dir, RUNS_FILE)
        self.runs = read_runs(runs) if os.path.exists(runs) else []
        self._tables: dict[str, list[dict]] = {}
        self._cells: dict[tuple, dict] = {}
        self._papers: dict[str, dict] = {}

    def cells(self, schedule: str, table: str, seeds: tuple[str, ...] | None = None) -> dict:
        """record.cells of the record of runs, each table, schedule and `seeds`' computed once
        (every claim on a table reads it)."""
        if (schedule, table, seeds) not in self._cells:
            self._cells[(schedule, table, seeds)] = cells(self.runs, schedule, table, seeds)
        return self._cells[(schedule, table, seeds)]

    def table(self, name: str) -> list[dict]:
        if name not in self._tables:
            path = os.path.join(self.tsv_dir, f"{name}.tsv")
            if not os.path.exists(path):
                raise InputError(f"block {name}: {path} does not exist; expected its table's TSV")
            self._tables[name] = read_rows(path)
        return self._tables[name]

    def pretraining(self) -> list[dict]:
        """pretraining.tsv's rows: each pre-training run's held-out numbers."""
        return self.table("pretraining")

    def paper(self, claim: Claim) -> dict:
        """{(table, row, column): the paper's number} of the claim's table, by our row, each
        table's built once."""
        name = claim.table
        if name not in self._papers:
            self._papers[name] = {
                (name, r["row"], r["column"]): r["paper"] for r in self.table(name)
            }
        return self._papers[name]


def render_table(record: Record, name: str, schedules: list[str]) -> list[str]:
    """The markdown table's lines: a line per row and column of ours, the paper's number, then
    ours at each of `schedules` that the TSV has."""
    rows = record.table(name)
    schedules = table_schedules(rows, schedules)
    ours = {schedule: record.cells(schedule, name) for schedule in schedules}
    at = {(c["schedule"], c["row"], c["column"]): c for c in rows}
    pairs = list(dict.fromkeys((c["row"], c["column"]) for s in schedules for c in rows
                               if c["schedule"] == s))  # fmt: skip
    lines = ["| | | paper | " + " | ".join(f"`{s}`" for s in schedules) + " |"]
    lines.append("|---" * (len(schedules) + 3) + "|")
    for row, column in pairs:
        given = [at[(s, row, column)] for s in schedules if (s, row, column) in at]
        paper_row, paper = given[0]["paper_row"], given[0]["paper"]
        label = row if paper_row == row else f"{row} ({paper_row})"
        values = []
        for schedule in schedules:
            cell = ours[schedule].get((row, column))
            tsv = at.get((schedule, row, column))
            values.append(described(cell) if cell else tsv["ours"] if tsv else "-")
        lines.append(f"| {label} | {column} | {paper} | " + " | ".join(values) + " |")
    return lines


def table_schedules(cells: list[dict], schedules: list[str]) -> list[str]:
    """The `schedules` that `cells` has rows of (`long40k`: the ablations')."""
    return [s for s in schedules if any(c["schedule"] == s for c in cells)]


def render_block(body: str, record: Record, name: str, schedules: list[str]) -> str:
    """The block's text with its table written from the record and its title naming the
    schedules."""
    lines = body.rstrip("\n").split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith("|")), len(lines))
    last = first
    while last < len(lines) and lines[last].startswith("|"):
        last += 1
    shown = table_schedules(record.table(name), schedules)
    account = "(the paper's, then ours: " + ", ".join(f"`{s}`" for s in shown) + ")"
    head = [ACCOUNT.sub(account, line) for line in lines[:first]]
    return "\n".join(head + render_table(record, name, schedules) + lines[last:]) + "\n"


def render_verdicts(record: Record, table: str) -> str:
    """Each claim on `table`: a line per column and schedule (the best schedule first)."""
    out = []
    for claim in (claim for claim in CLAIMS if claim.table == table):
        paper = record.paper(claim)
        readings = [r for s in claim.schedules for r in read(claim, s, record.cells, paper)]
        readings.sort(key=lambda r: list(claim.columns).index(r.column))  # stable: by schedule
        out += [f"**{claim.says}**: {claim.a} against {claim.b}", ""]
        out += ["| | | paper | ours | floor | verdict |", "|---|---|---|---|---|---|"]
        for r in readings:
            floor = described(r.floor) if r.floor else "-"
            ours = f"{described(r.a)} against {described(r.b)}"
            out.append(f"| {r.column} | `{r.schedule}` | {r.paper[0]} against {r.paper[1]} | "
                       f"{ours} | {floor} | {r.verdict} |")  # fmt: skip
        out.append("")
    return "\n".join(out)


def render_summary(record: Record, page: str) -> str:
    """A line per claim: its headline column's numbers and verdict at its best schedule, and a
    link to its page (`page`: the folder of the tables' pages, relative to the summary's)."""
    lines = []  # (table, its line)
    for table, schedule, says, row, column in UNCOMPARED:
        found = {(r["schedule"], r["row"], r["column"]): r for r in record.table(table)}
        cell = found.get((schedule, row, column))
        if cell is None:
            continue
        ours = record.cells(schedule, table).get((row, column))
        value = described(ours) if ours else cell["ours"]
        title = table.replace("table", "Table ")
        parts = [f"[{title}]({page}/{table}.md)", says, column, cell["paper"]]
        lines.append((table, _line(parts + [f"{value}, `{schedule}`", NOT_COMPARED])))
    for claim in CLAIMS:
        if not claim.in_summary:
            continue
        best = claim.schedules[0]
        reading = next((r for r in read(claim, best, record.cells, record.paper(claim))
                        if r.column == claim.headline), None)  # fmt: skip
        if reading is None:
            continue
        title = claim.table.replace("table", "Table ").replace("figure", "Figure ")
        link = f"[{title}]({page}/{claim.table}.md)"
        ours = f"{described(reading.a)} against {described(reading.b)}, `{best}`"
        paper = f"{reading.paper[0]} against {reading.paper[1]}"
        parts = [link, claim.says, reading.column, paper, ours, str(reading.verdict)]
        lines.append((claim.table, _line(parts)))
    lines.sort(key=lambda line: PAGES.index(line[0]))  # stable: each table's claims in order
    head = [
        "| | the paper's claim | column | paper | ours | verdict |",
        "|---|---|---|---|---|---|",
    ]
    return "\n".join(head + [line for _, line in lines]) + "\n"


def render_seed_changes(record: Record) -> str:
    """The verdicts that more pre-training seeds changed: each claim's reading at its best
    schedule from the first seed's runs alone against all seeds' (the floor's runs too), for
    the readings whose cells have a later seed's runs."""
    changed, seeded, first_seed = [], 0, functools.partial(record.cells, seeds=("1",))
    for claim in CLAIMS:
        best, paper = claim.schedules[0], record.paper(claim)
        first = {r.column: r for r in read(claim, best, first_seed, paper)}
        for reading in read(claim, best, record.cells, paper):
            before = first.get(reading.column)
            if before is None or max(reading.a.seeds, reading.b.seeds) < 2:
                continue
            seeded += 1
            if before.verdict.word != reading.verdict.word:
                title = claim.table.replace("table", "Table ").replace("figure", "Figure ")
                cells = [title, claim.says, reading.column, str(before.verdict)]
                changed.append(_line(cells + [str(reading.verdict)]))
    if not seeded:
        return "No cell that a verdict reads has a second pre-training seed's runs yet.\n"
    if not changed:
        return f"Of the {seeded} readings with a second seed's runs, none changed its verdict.\n"
    head = [_line(["", "the paper's claim", "column", "seed 1", "all seeds"]), "|---" * 5 + "|"]
    kept = seeded - len(changed)
    tail = [f"\nThe other {kept} readings with a second seed's runs kept theirs."] if kept else []
    return "\n".join(head + changed + tail) + "\n"


def render_pretraining_seeds(record: Record, schedule: str = "long40k") -> str:
    """The pre-trainings of `schedule` with a later seed: a line per run, the first seed's,
    its same-seed reruns' and each later seed's held-out numbers (a left-to-right model's over
    every next token)."""
    runs: dict[Pretraining, list[tuple[int, bool, dict]]] = {}  # seed 1's run: (seed, rerun, row)
    for row in record.pretraining():
        rerun = row["run"].endswith(RERUN)
        parsed = Pretraining.from_name(row["run"].removesuffix(RERUN))
        if row["schedule"] != schedule or parsed is None or parsed[1]:
            continue  # another schedule, the random model, a kept step
        run = parsed[0]
        runs.setdefault(dataclasses.replace(run, seed=1), []).append((run.seed, rerun, row))
    head = ["run", "seed", "held-out perplexity", "accuracy", "NSP accuracy", "[MASK] perplexity"]
    out = [_line(head), "|---" * len(head) + "|"]
    for run, seeds in runs.items():
        if all(seed == 1 for seed, _, _ in seeds):
            continue
        masking = "/".join(f"{float(rate) * 100:.0f}" for rate in run.masking.split(","))
        shape = "/".join(re.findall(r"\d+", run.shape))
        label = f"{shape}, {OBJECTIVES[run.objective]}, {masking}"
        for seed, rerun, row in sorted(seeds, key=lambda entry: entry[:2]):
            lm = "masked_lm" if row["masked_lm_perplexity"] != "-" else "lm"
            values = [row[f"{lm}_perplexity"], row[f"{lm}_accuracy"], row["next_sentence_accuracy"],
                      row["mask_only_masked_lm_perplexity"]]  # fmt: skip
            named = f"{seed} (rerun)" if rerun else f"{seed}"
            out.append(_line([label, named] + [_rounded(v) for v in values]))
    if len(out) == 2:
        return f"No `{schedule}` pre-training has a second seed's run yet.\n"
    return "\n".join(out) + "\n"


def _rounded(value: str) -> str:
    """A held-out number as the pages give it: 4 significant digits ("-" where not measured)."""
    return "-" if value == "-" else f"{float(value):.4g}"


def _line(cells: list[str]) -> str:
    """A markdown table's line."""
    return "| " + " | ".join(cells) + " |"


def render_doc(text: str, tsv_dir: str, schedules: list[str]) -> tuple[str, list[str]]:
    """(the doc with every block rewritten, the names of the blocks changed)."""
    record, changed = Record(tsv_dir), []

    def rewrite(match: re.Match) -> str:
        start, name, body, end = match.groups()
        if name == "rule":
            new = "".join(f"{i}. {line}\n" for i, line in enumerate(RULE, 1))
        elif name == "summary":
            new = render_summary(record, "reproduction")
        elif name == "seed_changes":
            new = render_seed_changes(record)
        elif name == "pretraining_seeds":
            new = render_pretraining_seeds(record)
        elif name.startswith(VERDICTS):
            new = render_verdicts(record, name[len(VERDICTS) :])
        else:
            new = render_block(body, record, name, schedules)
        if new != body:
            changed.append(name)
        return start + new + end

    def quote(match: re.Match) -> str:
        start, kind, where, body, end = match.groups()
        table, schedule, row, column = where.split("|")
        cell = record.cells(schedule, table).get((row, column))
        if cell is None:
            raise InputError(f"a quote of {where}: the record has no such cell (table|schedule|"
                             "row|column of docs/reproduction/runs.tsv)")  # fmt: skip
        new = described(cell) if kind == "cell" else figure(cell.mean)
        if new != body:
            changed.append(f"{kind}:{where}")
        return start + new + end

    text = BLOCK.sub(rewrite, text)
    if len(OPENED.findall(text)) != len(QUOTE.findall(text)):
        raise InputError("a quote (<!-- cell:... --> or <!-- mean:... -->) without its closing "
                         "<!-- /cell --> or <!-- /mean -->; expected each closed")  # fmt: skip
    return QUOTE.sub(quote, text), changed


@options
class DocTablesOptions(Options):
    doc: str = option(
        "",
        "The markdown files whose table blocks to write, comma-separated (default: "
        "docs/REPRODUCTION.md and every page of docs/reproduction/).",
    )
    tsv_dir: str = option(
        os.path.join(REPO, "docs", "reproduction"), "The folder of the tables' TSVs."
    )
    schedules: str = option(
        "long40k,long,small",
        "The schedules whose numbers each cell gives, in order (those a table's TSV has).",
    )
    verify: bool = option(False, "Write nothing; exit 1 if a block differs from its TSV.")
    add_runs: str = option(
        "",
        "A record of runs reproduce.py wrote (OUT/tables/runs.tsv): its lines go into "
        "--tsv_dir's runs.tsv first, each replacing the line of the same run (and the "
        "aggregate line that stood for it), and the blocks are written from the result.",
    )


def record_pages() -> list[str]:
    """The reproduction record's pages: docs/REPRODUCTION.md, then docs/reproduction/*.md."""
    folder = os.path.join(REPO, "docs", "reproduction")
    pages = sorted(name for name in os.listdir(folder) if name.endswith(".md"))
    return [os.path.join(REPO, "docs", "REPRODUCTION.md")] + [
        os.path.join(folder, name) for name in pages
    ]


def doc_tables(args: DocTablesOptions) -> None:
    check_options(args)
    if args.add_runs:
        if args.verify:
            raise InputError("--add_runs with --verify: verifying writes nothing; give one")
        if not filesystem.isfile(args.add_runs):
            raise InputError(f"--add_runs={args.add_runs} does not exist; expected a runs.tsv")
        record = os.path.join(args.tsv_dir, RUNS_FILE)
        before = read_runs(record) if os.path.exists(record) else []
        new = read_runs(args.add_runs)
        if not new or set(new[0]) != set(HEADER):
            raise InputError(f"--add_runs={args.add_runs}: expected the columns {HEADER}")
        atomic_write_text(record, format_runs(merged(before, new)))
        print(f"{record}: {len(new)} run(s) added from {args.add_runs}")
    docs = [d for d in args.doc.split(",") if d] or record_pages()
    schedules = [s for s in args.schedules.split(",") if s]
    for doc in docs:
        if not os.path.exists(doc):
            raise InputError(f"--doc={doc} does not exist; expected a markdown file")
        new, changed = render_doc(read_text(doc, "a markdown file"), args.tsv_dir, schedules)
        if args.verify:
            if changed:
                raise SystemExit(
                    f"{doc}: the blocks {', '.join(changed)} differ from their TSVs in "
                    f"{args.tsv_dir}; run scripts/paper/doc_tables.py to rewrite them"
                )
            print(f"{doc}: every block is its TSVs'")
            continue
        atomic_write_text(doc, new)
        print(f"{doc}: rewrote {', '.join(changed) or 'nothing (all as their TSVs)'}")


if __name__ == "__main__":
    cli.define_flags(DocTablesOptions)
    cli.run_with_options(DocTablesOptions, doc_tables)
