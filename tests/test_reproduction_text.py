"""The reproduction record's readings of the ablations (Tables 5, 6, 8 and Figure 5, each
schedule, each on its table's page docs/reproduction/<table>.md) quote the TSVs they read. Each
number of ours that a "What holds and what does not" or "What it shows" paragraph gives as a
table's cell is a quote naming that cell (`<!-- cell:TABLE|SCHEDULE|ROW|COLUMN -->...<!-- /cell
-->`, or `mean:` for its mean alone), which scripts/paper/doc_tables.py writes from the record of
runs and its --verify checks against that exact row and column. Every number left plain is the
paper's cell, a pre-training run's perplexity, a restarts' spread or a number derived from cells,
checked here by its derivation, and may not be a cell of ours: a number of ours quoted plain
(perhaps for the wrong row), misquoted, or rounded from rounded values, fails."""

from __future__ import annotations

import csv
import functools
import re
import sys

import pytest
from conftest import REPO, recorded_cells

sys.path.insert(0, str(REPO / "scripts" / "paper"))
from reproduction.record import figure  # noqa: E402
from reproduction.verdicts import Cell  # noqa: E402

DOCS = REPO / "docs" / "reproduction"
# A decimal as the text quotes it (not a version such as 2.21.0, not 1e-3).
NUMBER = re.compile(r"(?<![\w.])\d+\.\d+(?!\.\d)")
# A number of ours quoted by its cell, as doc_tables.py's QUOTE reads it (on one line): the cell
# (TABLE|SCHEDULE|ROW|COLUMN), then the text doc_tables.py wrote from it.
QUOTE = re.compile(r"<!-- (cell|mean):([^>]+?) -->(.*?)<!-- /\1 -->")


def rows(name: str) -> list[dict]:
    with open(DOCS / f"{name}.tsv", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def paper_numbers(table: str, schedules: tuple[str, ...]) -> set[str]:
    """The paper's cells of `table` (on its rows at `schedules`), as written. Ours are not here:
    a reading quotes each of ours by its cell (QUOTE), never plain."""
    return {row["paper"] for row in rows(table) if row["schedule"] in schedules} - {"-"}


@functools.cache
def ours(table: str, schedule: str) -> dict[tuple[str, str], Cell]:
    """{(row, column): Cell} of ours of `table` at `schedule`, as the pages quote them: the
    record of runs' cell (every pre-training seed pooled) where it has one, else the TSV's."""
    found = {
        (row["row"], row["column"]): Cell(
            1, float(row["ours"]), None if row["spread"] == "-" else float(row["spread"])
        )
        for row in rows(table)
        if row["schedule"] == schedule and row["ours"] != "-"
    }
    found.update(recorded_cells(table, schedule))
    return found


def spreads(table: str, schedule: str) -> dict[str, str]:
    """Each cell's spread of `table` at `schedule` (to one decimal, or as its cell gives it), as a
    reading gives their range ("the restarts' spread ±0.3-1.4") apart from any cell (the text's
    number -> whose)."""
    return {
        text: f"{row} {column}'s spread"
        for (row, column), cell in ours(table, schedule).items()
        if cell.spread is not None
        for text in (f"{cell.spread:.1f}", figure(cell.spread))
    }


def pretraining(schedule: str) -> dict[str, dict]:
    return {row["run"]: row for row in rows("pretraining") if row["schedule"] == schedule}


def mask_only(runs: dict, run: str) -> float:
    return float(runs[run]["mask_only_masked_lm_perplexity"])


def page(name: str) -> str:
    """The record's page of table `name` (table5, figure5, ...): docs/reproduction/<name>.md."""
    return (DOCS / f"{name}.md").read_text()


def reading(name: str, heading: str) -> str:
    """The reading under `heading` in table `name`'s page, in its discussion (each ablation has
    one per schedule, under the same heading as the other ablations'): the heading's line and its
    bullets, to the next blank line or the page's end."""
    text = page(name).rstrip("\n") + "\n\n"
    start = text.find(heading)
    assert start > text.index("\n## Discussion\n"), f"{name}.md: no {heading!r} in its discussion"
    return text[start + len(heading) : text.index("\n\n", start)]


def unquoted(text: str) -> str:
    """`text` without its quotes of cells (doc_tables.py --verify checks each against its cell)."""
    return QUOTE.sub("", text)


def plain(text: str, cell: str) -> str:
    """`text` with its quotes of `cell` (TABLE|SCHEDULE|ROW|COLUMN) left as plain numbers: how
    the readings quoted ours before quotes named their cells."""
    return QUOTE.sub(lambda m: m[3] if m[2] == cell else m[0], text)


def derived_table6_long40k() -> dict[str, str]:
    """The long40k reading's derived numbers, each from the cells (the text's number -> how)."""
    runs = pretraining("long40k")
    run = "{}_mlm_nsp_0.8_0.1_0.1_warmup4000{}".format
    derived = {}
    for later, earlier in (("L-2_H-128_A-1", "L-1_H-128_A-2"), ("L-8_H-192_A-3", "L-4_H-192_A-3")):
        for step in ("_step16000", "_step24000", "_step32000", ""):
            ratio = mask_only(runs, run(later, step)) / mask_only(runs, run(earlier, step))
            derived[f"{ratio:.2f}"] = f"{later} over {earlier}, [MASK]-only{step}"
        for shape in (later, earlier):
            derived |= {f"{mask_only(runs, run(shape, '_step16000')):.1f}": f"{shape} at 16,000"}
    mrpc = {r["row"]: float(r["ours"]) for r in rows("table6") if r["schedule"] == "long40k"
            and r["column"] == "MRPC"}  # fmt: skip
    narrow = [mrpc[shape] for shape in ("1/128/2", "2/128/1", "2/128/2", "4/128/2")]
    wide = [mrpc["4/192/3"], mrpc["8/192/3"]]
    derived[f"{max(narrow) - min(narrow):.1f}"] = "MRPC's spread across the width-128 shapes"
    derived[f"{min(wide) - max(narrow):.1f}"] = "the wide shapes' least lead on MRPC"
    derived[f"{max(wide) - min(narrow):.1f}"] = "the wide shapes' most lead on MRPC"
    return derived


# Quoted numbers that are no cell: what each is.
CONSTANTS = {
    "68.4": "MRPC Dev's majority class (68.4% of its pairs are paraphrases)",
    "1.5": "one SST-2 run's noise, about ±1.5 points (Table 6's restarts at small)",
    "1.3": "the smallest shape's weights, in millions",
    "5.3": "the largest shape's weights, in millions",
    "52.7": "RTE Dev's majority class (52.7% of its 277 pairs are not entailment)",
    "0.8": "one QNLI run's noise on 3,912 Dev pairs, about ±0.8 points (binomial)",
    "7.5": "hours of pre-training for Table 6's six shapes at twice `long`'s 20,000 steps here",
    "6.4": "the LTR model's predictions per sequence over the masked LM's (128 / 20)",
}
# Read from the runs' training logs, which no TSV holds (Table 6's notes at `long` quote each
# run's): masked-LM accuracy at step 1,000, the second plateau's loss and accuracy, and the loss
# at step 20,000 of the four runs that stayed on it.
TABLE6_LONG_LOGS = {"0.12", "0.13", "5.8", "5.9", "0.15", "5.65", "5.73"}


def measured(schedule: str, columns: tuple[str, ...], decimals: int) -> set[str]:
    """`columns` of each pre-training run at `schedule`, to `decimals` as the text quotes them."""
    return {f"{float(r[c]):.{decimals}f}" for r in pretraining(schedule).values() for c in columns
            if r[c] != "-"}  # fmt: skip


def perplexities(schedule: str) -> set[str]:
    """Each run's held-out perplexities, on its own masking and on the all-[MASK] records (the
    LTR model's: its next-token perplexity), to one decimal."""
    columns = ("masked_lm_perplexity", "mask_only_masked_lm_perplexity", "lm_perplexity")
    return measured(schedule, columns, 1)


def gaps(table: str, schedule: str) -> dict[str, str]:
    """Every gap between two rows of one column of `table` at `schedule`, ours or the paper's
    (the text's number -> which): "above it by 17.4 points" is such a gap."""
    by_column: dict[tuple[str, str], dict[str, float]] = {}
    for row in (r for r in rows(table) if r["schedule"] == schedule and r["paper"] != "-"):
        by_column.setdefault(("paper", row["column"]), {})[row["row"]] = float(row["paper"])
    for (row, column), cell in ours(table, schedule).items():
        by_column.setdefault(("ours", column), {})[row] = cell.mean
    return {
        f"{values[a] - values[b]:.1f}": f"{whose} {column}: {a} over {b}"
        for (whose, column), values in by_column.items()
        for a in values
        for b in values
        if values[a] > values[b]
    }


def unigram(schedule: str) -> set[str]:
    """The unigram model's [MASK]-only perplexity (one decimal) and accuracy (two)."""
    runs = pretraining(schedule)
    accuracy = float(runs["unigram"]["mask_only_masked_lm_accuracy"])
    return {f"{mask_only(runs, 'unigram'):.1f}", f"{accuracy:.2f}"}


def nsp(schedule: str) -> set[str]:
    """Each run's held-out next-sentence accuracy at `schedule`, to two decimals."""
    return measured(schedule, ("next_sentence_accuracy",), 2)


def long_qnli() -> set[str]:
    """QNLI fine-tuned longer (docs/reproduction/long_qnli.tsv): its Dev accuracies."""
    return {row["dev_accuracy"] for row in rows("long_qnli")}


# Each reading: what its numbers may be (cells, perplexities) and derived from (number -> how).
READINGS = {
    ("table6", "What holds and what does not, `long40k`"): lambda: (
        paper_numbers("table6", ("long40k",))
        | paper_numbers("table5", ("long",))
        | perplexities("long40k"),
        derived_table6_long40k() | spreads("table6", "long40k"),
    ),
    # Table 8's maskings are Table 6's 4/128/2; the unigram model is `long`'s (the same records).
    ("table8", "What holds and what does not, `long40k`"): lambda: (
        paper_numbers("table8", ("long40k",)) | perplexities("long40k") | unigram("long"),
        gaps("table8", "long40k") | spreads("table8", "long40k"),
    ),
    # Table 5's rows at Tables 6 and 8's recipe, beside `long`'s (the same columns).
    ("table5", "What holds and what does not, `long40k`"): lambda: (
        paper_numbers("table5", ("long40k", "long")) | perplexities("long40k"),
        gaps("table5", "long40k") | spreads("table5", "long40k"),
    ),
    # `long`'s and `small`'s readings, each against its own schedule's cells.
    ("table5", "What it shows, `long`:"): lambda: (
        paper_numbers("table5", ("long", "small")) | perplexities("long") | long_qnli(),
        gaps("table5", "long"),
    ),
    ("table5", "What it shows, `small`:"): lambda: (
        paper_numbers("table5", ("small",)),
        gaps("table5", "small"),
    ),
    ("table6", "What holds and what does not, `long`"): lambda: (
        paper_numbers("table6", ("long",))
        | perplexities("long")
        | unigram("long")
        | TABLE6_LONG_LOGS,
        gaps("table6", "long") | spreads("table6", "long"),
    ),
    ("table6", "What holds and what does not, `small`"): lambda: (
        paper_numbers("table6", ("small",)),
        gaps("table6", "small"),
    ),
    ("table8", "What the two rows show, `long`"): lambda: (
        paper_numbers("table8", ("long",)) | perplexities("long") | unigram("long"),
        {},
    ),
    ("table8", "What holds and what does not, `small`"): lambda: (
        paper_numbers("table8", ("small",))
        | perplexities("small")
        | nsp("small")
        | unigram("small"),
        gaps("table8", "small"),
    ),
    ("figure5", "What it shows, `long40k`:"): lambda: (
        paper_numbers("figure5", ("long40k",))
        | paper_numbers("table5", ("long40k",))
        | perplexities("long40k"),
        gaps("figure5", "long40k"),
    ),
    ("figure5", "What it shows, `long`:"): lambda: (
        paper_numbers("figure5", ("long",))
        | paper_numbers("table5", ("long",))
        | perplexities("long")
        | long_qnli(),
        {},
    ),
    ("figure5", "What it shows, `small`:"): lambda: (
        paper_numbers("figure5", ("small",)) | paper_numbers("table5", ("small",)),
        {},
    ),
}


def unexplained(name: str, heading: str, text: str) -> list[str]:
    """The plain numbers of `text`, table `name`'s reading under `heading`, that are none of what
    its numbers may be (the paper's cells, perplexities, constants) nor derived from cells."""
    allowed, derived = READINGS[name, heading]()
    return [
        number
        for number in NUMBER.findall(unquoted(text))
        if number not in allowed and number not in derived and number not in CONSTANTS
    ]


@pytest.mark.parametrize("name, heading", list(READINGS))
def test_every_number_of_an_ablations_reading_is_a_quote_or_the_papers_or_derived(name, heading):
    text = reading(name, heading)
    assert QUOTE.search(text), "the reading quotes none of our cells"
    # A quote opened and not closed on its line is no quote to doc_tables.py: it is not checked.
    assert "<!--" not in unquoted(text)
    assert unexplained(name, heading, text) == []


def test_a_number_of_ours_quoted_plain_is_unexplained():
    # The reading's first quote is table5|long40k|BERT|QNLI ("66.0 ±0.51 (6)" as the record
    # stands). Plain, it passed while it was any cell of the table's, of whichever row; now only a
    # quote of its own cell may give it.
    name, heading = "table5", "What holds and what does not, `long40k`"
    text = reading(name, heading)
    assert unexplained(name, heading, text) == []
    first = QUOTE.search(text)
    assert first[2] == "table5|long40k|BERT|QNLI"
    # Its mean is unexplained (its spread, alone, may be quoted as a spread).
    assert unexplained(name, heading, plain(text, first[2])) == NUMBER.findall(first[3])[:1]
    # A number of another row, plain where the text means BERT's: No NSP's QNLI.
    no_nsp = figure(ours("table5", "long40k")[("No NSP", "QNLI")].mean)
    assert unexplained(name, heading, text.replace(first[0], no_nsp, 1)) == [no_nsp]


def test_a_ratio_is_rounded_from_the_tsvs_own_values():
    # 2/128/1 over 1/128/2 at 24,000 steps: 104.226 / 74.6572 = 1.396, where the one-decimal
    # values quoted beside it, 104.2 / 74.7, give 1.39.
    assert "1.40 at 24,000" in reading("table6", "What holds and what does not, `long40k`")
    assert derived_table6_long40k()["1.40"].startswith("L-2_H-128_A-1 over")


def test_a_reading_is_taken_from_its_own_tables_section():
    # Tables 6 and 8 both have a reading headed "What holds and what does not, `small`".
    heading = "What holds and what does not, `small`"
    assert "predicted token is left unchanged" in reading("table8", heading)
    assert "predicted token is left unchanged" not in reading("table6", heading)
