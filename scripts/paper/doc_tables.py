"""Writes docs/REPRODUCTION.md's tables from the TSVs in docs/reproduction/: each cell ours at
every schedule the TSV has beside the paper's (`long / small / paper`; Table 6 `long40k`
first), so that every number of ours in a table is its TSV's, and a reader sees the long
schedule beside the short one.

    python scripts/paper/doc_tables.py           # rewrite each <!-- begin NAME --> block
    python scripts/paper/doc_tables.py --verify   # exit 1, naming the table, where one differs

A block holds a title line, the table and its notes; the table is written anew from
docs/reproduction/NAME.tsv (its rows in the order the schedules first give them; `-` where a
schedule has no number yet; ±: the spread over fine-tuning restarts), the title's "(ours ...)"
names the schedules, and the notes are kept as written.
"""

from __future__ import annotations

import csv
import os
import re

from bert_tf import cli
from bert_tf.errors import InputError
from bert_tf.io.fileio import atomic_write_text, read_text
from bert_tf.options import Options, check_options, option, options

BLOCK = re.compile(r"(<!-- begin (\w+) -->\n)(.*?)(<!-- end \2 -->)", re.S)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The title's account of the cells: "(ours / paper)" as reproduce.py writes it, or as written here.
CELLS = re.compile(r"\(ours[^()]*/ paper\)")


def read_rows(path: str) -> list[dict]:
    """The TSV's cells as dicts (schedule, row, column, ours, paper_row, paper, spread, lr)."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def render_table(cells: list[dict], schedules: list[str]) -> list[str]:
    """The markdown table's lines: a row per row of ours, a column per column of ours, each cell
    `ours at schedules[0] / ours at schedules[1] / ... / paper` (the schedules the TSV has)."""
    schedules = table_schedules(cells, schedules)
    cells = [c for c in cells if c["schedule"] in schedules]
    cells.sort(key=lambda c: schedules.index(c["schedule"]))  # stable: each schedule's order kept
    rows = list(dict.fromkeys(c["row"] for c in cells))
    columns = list(dict.fromkeys(c["column"] for c in cells))
    at = {(c["schedule"], c["row"], c["column"]): c for c in cells}
    lines = ["| | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for row in rows:
        given = [c for c in cells if c["row"] == row]
        paper_row = given[0]["paper_row"]
        paper = {c["column"]: c["paper"] for c in given if c["paper"] != "-"}
        values = []
        for column in columns:
            ours = [_ours(at.get((schedule, row, column))) for schedule in schedules]
            values.append(" / ".join(ours + [paper.get(column, "-")]))
        label = row if paper_row == row else f"{row} ({paper_row})"
        lines.append(f"| {label} | " + " | ".join(values) + " |")
    return lines


def table_schedules(cells: list[dict], schedules: list[str]) -> list[str]:
    """The `schedules` that `cells` has rows of (`long40k`: Table 6's alone)."""
    return [s for s in schedules if any(c["schedule"] == s for c in cells)]


def _ours(cell: dict | None) -> str:
    if cell is None:
        return "-"
    spread = cell.get("spread", "-")
    return cell["ours"] + (f" ±{spread}" if spread not in ("-", "", None) else "")


def render_block(body: str, cells: list[dict], schedules: list[str]) -> str:
    """The block's text with its table written from `cells` and its title naming `schedules`."""
    lines = body.rstrip("\n").split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith("|")), len(lines))
    last = first
    while last < len(lines) and lines[last].startswith("|"):
        last += 1
    shown = table_schedules(cells, schedules)
    account = "(" + " / ".join([f"ours, `{s}`" for s in shown] + ["paper"]) + ")"
    head = [CELLS.sub(account, line) for line in lines[:first]]
    return "\n".join(head + render_table(cells, schedules) + lines[last:]) + "\n"


def render_doc(text: str, tsv_dir: str, schedules: list[str]) -> tuple[str, list[str]]:
    """(the doc with every block whose TSV exists rewritten, the names of the blocks changed)."""
    changed = []

    def rewrite(match: re.Match) -> str:
        start, name, body, end = match.groups()
        path = os.path.join(tsv_dir, f"{name}.tsv")
        if not os.path.exists(path):
            raise InputError(f"block {name}: {path} does not exist; expected its table's TSV")
        new = render_block(body, read_rows(path), schedules)
        if new != body:
            changed.append(name)
        return start + new + end

    return BLOCK.sub(rewrite, text), changed


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


def record_pages() -> list[str]:
    """The reproduction record's pages: docs/REPRODUCTION.md, then docs/reproduction/*.md."""
    folder = os.path.join(REPO, "docs", "reproduction")
    pages = sorted(name for name in os.listdir(folder) if name.endswith(".md"))
    return [os.path.join(REPO, "docs", "REPRODUCTION.md")] + [
        os.path.join(folder, name) for name in pages
    ]


def doc_tables(args: DocTablesOptions) -> None:
    check_options(args)
    docs = [d for d in args.doc.split(",") if d] or record_pages()
    schedules = [s for s in args.schedules.split(",") if s]
    for doc in docs:
        if not os.path.exists(doc):
            raise InputError(f"--doc={doc} does not exist; expected a markdown file")
        new, changed = render_doc(read_text(doc, "a markdown file"), args.tsv_dir, schedules)
        if args.verify:
            if changed:
                raise SystemExit(
                    f"{doc}: the tables {', '.join(changed)} differ from their TSVs in "
                    f"{args.tsv_dir}; run scripts/paper/doc_tables.py to rewrite them"
                )
            print(f"{doc}: every table is its TSV's")
            continue
        atomic_write_text(doc, new)
        print(f"{doc}: rewrote {', '.join(changed) or 'nothing (all as their TSVs)'}")


if __name__ == "__main__":
    cli.define_flags(DocTablesOptions)
    cli.run_with_options(DocTablesOptions, doc_tables)
