"""The reproduction record's readings of the ablations (Tables 5, 6, 8 and Figure 5, each
schedule, each on its table's page docs/reproduction/<table>.md) quote the TSVs they read: every
number in a "What holds and what does not" or "What it shows" paragraph is a cell of
docs/reproduction/ (ours, the paper's, a restarts' spread, a pre-training run's perplexity), or a
number derived from cells, checked here by its derivation. A number misquoted, or rounded from
rounded values, fails."""

from __future__ import annotations

import csv
import re

import pytest
from conftest import REPO

DOCS = REPO / "docs" / "reproduction"
# A decimal as the text quotes it (not a version such as 2.21.0, not 1e-3).
NUMBER = re.compile(r"(?<![\w.])\d+\.\d+(?!\.\d)")


def rows(name: str) -> list[dict]:
    with open(DOCS / f"{name}.tsv", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def one_decimal(value: str) -> set[str]:
    return set() if value in ("-", "") else {f"{float(value):.1f}"}


def cells(table: str, schedules: tuple[str, ...]) -> set[str]:
    """Every cell of `table` at `schedules` as a page quotes it: ours, the paper's and the
    restarts' spread as written, ours and the spread also to one decimal."""
    found = set()
    for row in rows(table):
        if row["schedule"] in schedules:
            found |= {row["ours"], row["paper"], row["spread"]} - {"-"}
            found |= one_decimal(row["ours"]) | one_decimal(row["spread"])
    return found


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
    for row in (r for r in rows(table) if r["schedule"] == schedule):
        for whose in ("ours", "paper"):
            if row[whose] != "-":
                by_column.setdefault((whose, row["column"]), {})[row["row"]] = float(row[whose])
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
        cells("table6", ("long40k",)) | cells("table5", ("long",)) | perplexities("long40k"),
        derived_table6_long40k(),
    ),
    # Table 8's maskings are Table 6's 4/128/2; the unigram model is `long`'s (the same records).
    ("table8", "What holds and what does not, `long40k`"): lambda: (
        cells("table8", ("long40k",)) | perplexities("long40k") | unigram("long"),
        gaps("table8", "long40k"),
    ),
    # Table 5's rows at Tables 6 and 8's recipe, beside `long`'s (the same columns).
    ("table5", "What holds and what does not, `long40k`"): lambda: (
        cells("table5", ("long40k", "long")) | perplexities("long40k"),
        gaps("table5", "long40k"),
    ),
    # `long`'s and `small`'s readings, each against its own schedule's cells.
    ("table5", "What it shows, `long`:"): lambda: (
        cells("table5", ("long", "small")) | perplexities("long") | long_qnli(),
        gaps("table5", "long"),
    ),
    ("table5", "What it shows, `small`:"): lambda: (
        cells("table5", ("small",)),
        gaps("table5", "small"),
    ),
    ("table6", "What holds and what does not, `long`"): lambda: (
        cells("table6", ("long",)) | perplexities("long") | unigram("long") | TABLE6_LONG_LOGS,
        gaps("table6", "long"),
    ),
    ("table6", "What holds and what does not, `small`"): lambda: (
        cells("table6", ("small",)),
        gaps("table6", "small"),
    ),
    ("table8", "What the two rows show, `long`"): lambda: (
        cells("table8", ("long",)) | perplexities("long") | unigram("long"),
        {},
    ),
    ("table8", "What holds and what does not, `small`"): lambda: (
        cells("table8", ("small",)) | perplexities("small") | nsp("small") | unigram("small"),
        gaps("table8", "small"),
    ),
    ("figure5", "What it shows, `long40k`:"): lambda: (
        cells("figure5", ("long40k",)) | cells("table5", ("long40k",)) | perplexities("long40k"),
        gaps("figure5", "long40k"),
    ),
    ("figure5", "What it shows, `long`:"): lambda: (
        cells("figure5", ("long",))
        | cells("table5", ("long",))
        | perplexities("long")
        | long_qnli(),
        {},
    ),
    ("figure5", "What it shows, `small`:"): lambda: (
        cells("figure5", ("small",)) | cells("table5", ("small",)),
        {},
    ),
}


@pytest.mark.parametrize("name, heading", list(READINGS))
def test_every_number_of_an_ablations_reading_is_a_cell_or_derived_from_cells(name, heading):
    allowed, derived = READINGS[name, heading]()
    unexplained = [
        number
        for number in NUMBER.findall(reading(name, heading))
        if number not in allowed and number not in derived and number not in CONSTANTS
    ]
    assert unexplained == []


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
