"""The paper's claims that the record reads, each a comparison of two of our rows, column by
column, with what the paper says of it; `read` gives each column's verdict by verdicts.RULE
from the record of runs (record.py). The record's pages show these and nothing else as
verdicts (doc_tables.py writes them; a test fails where a page's differ).

    for reading in read(CLAIMS[0], "long40k", functools.partial(record.cells, lines), paper):
        reading.column, reading.a, reading.b, reading.verdict
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable

from reproduction.verdicts import HIGHER, LOWER, SAME, Cell, Verdict, verdict

# Columns where lower is better.
PERPLEXITIES = ("LM (ppl)", "[MASK] ppl")
FLOOR = "no pre-training"  # the same shape fine-tuned from random weights: Tables 5, 7, 8's row


@dataclasses.dataclass(frozen=True)
class Claim:
    """The paper's claim that row `a` of `table` is, per column, HIGHER, LOWER or the SAME as
    row `b`, read at each of `schedules` (the first, the best: the summary's); `headline`: the
    column the summary shows; `floor`: the table and row no better than chance, on the same
    columns (None: no floor)."""

    table: str
    schedules: tuple[str, ...]
    says: str
    a: str
    b: str
    columns: dict
    headline: str
    floor: tuple[str, str] | None = None
    in_summary: bool = True  # False: on its table's page alone (a detail of another claim)


@dataclasses.dataclass(frozen=True)
class Reading:
    column: str
    schedule: str
    paper: tuple[str, str]  # the paper's numbers of a and b ("-" where it has none)
    a: Cell
    b: Cell
    floor: Cell | None
    verdict: Verdict


def _same_rows(table: str, schedules: tuple, says: str, a: str, b: str, columns: dict,
               headline: str) -> Claim:  # fmt: skip
    return Claim(table, schedules, says, a, b, columns, headline, (table, FLOOR))


# The ablations are read at `long40k` first (as long as the base model, at one recipe), then
# `long` and `small`; Figure 5's steps are named alike at `long40k` and `long` alone; Tables 4
# and 7 are `long`'s, then `small`'s.
ABLATIONS = ("long40k", "long", "small")
STEPS = ("long40k", "long")
TASKS = ("long", "small")


TABLE5_GLUE = ("MNLI-m", "QNLI", "MRPC", "SST-2")
TABLE6_SHAPES = ("1/128/2", "2/128/1", "2/128/2", "4/128/2", "4/192/3", "8/192/3")
TABLE6_FINETUNING = ("MNLI-m", "MRPC", "SST-2")

CLAIMS = [
    _same_rows(
        "table5",
        ABLATIONS,
        "Next-sentence prediction helps QNLI, MNLI and SQuAD (not MRPC or SST-2)",
        "BERT",
        "No NSP",
        {"QNLI": HIGHER, "MNLI-m": HIGHER, "SQuAD": HIGHER, "MRPC": SAME, "SST-2": SAME},
        "QNLI",
    ),
    _same_rows(
        "table5",
        ABLATIONS,
        "A left-to-right model is worse than the masked LM on every task",
        "No NSP",
        "LTR & No NSP",
        {column: HIGHER for column in (*TABLE5_GLUE, "SQuAD")},
        "SQuAD",
    ),
    _same_rows(
        "table5",
        ABLATIONS,
        "A BiLSTM on the left-to-right model helps SQuAD and hurts GLUE",
        "+ BiLSTM",
        "LTR & No NSP",
        {"SQuAD": HIGHER, "MNLI-m": SAME, "QNLI": LOWER, "MRPC": LOWER, "SST-2": LOWER},
        "SQuAD",
    ),
    Claim(
        "table6",
        ABLATIONS,
        "A bigger model is a better masked LM and fine-tunes better, even on small data sets",
        TABLE6_SHAPES[-1],
        TABLE6_SHAPES[0],
        {"LM (ppl)": LOWER, **{column: HIGHER for column in TABLE6_FINETUNING}},
        "MRPC",
        ("table5", FLOOR),
    ),
    *[
        Claim(
            "table6",
            ABLATIONS,
            "Each step up in size helps (the paper's rows in order)",
            bigger,
            smaller,
            {"LM (ppl)": LOWER, **{column: HIGHER for column in TABLE6_FINETUNING}},
            "LM (ppl)",
            ("table5", FLOOR),
            in_summary=False,
        )
        for smaller, bigger in itertools.pairwise(TABLE6_SHAPES)
    ],
    _same_rows(
        "table8",
        ABLATIONS,
        "Fine-tuning is robust to the masking: only [MASK] is level with 80/10/10",
        "80/10/10",
        "100/0/0",
        {"MNLI": SAME, "NER fine-tune": SAME},
        "NER fine-tune",
    ),
    _same_rows(
        "table8",
        ABLATIONS,
        "Only [MASK] hurts the feature-based approach",
        "80/10/10",
        "100/0/0",
        {"NER feature-based": HIGHER},
        "NER feature-based",
    ),
    _same_rows(
        "table8",
        ABLATIONS,
        "Only random tokens is much worse than the paper's mixture",
        "80/10/10",
        "0/0/100",
        {"NER feature-based": HIGHER, "NER fine-tune": HIGHER},
        "NER feature-based",
    ),
    _same_rows(
        "table8",
        ABLATIONS,
        "Without [MASK] in the mix, fine-tuning is still robust",
        "80/10/10",
        "80/20/0",
        {"MNLI": SAME, "NER fine-tune": SAME},
        "NER fine-tune",
    ),
    Claim(
        "figure5",
        STEPS,
        "The masked LM beats the left-to-right model almost immediately",
        "MLM step 40000",
        "LTR step 40000",
        {"QNLI": HIGHER},
        "QNLI",
        ("table5", FLOOR),
    ),
    Claim(
        "figure5",
        STEPS,
        "More pre-training steps still help at the end (the paper: 1M "
        "steps over 500k, +1.0 on MNLI)",
        "MLM step 40000",
        "MLM step 32000",
        {"QNLI": HIGHER},
        "QNLI",
        ("table5", FLOOR),
    ),
    _same_rows(
        "table4",
        ("long",),
        "Pre-training is what fine-tuning builds on (ours: against random weights)",
        "ours (L-4_H-128_A-2)",
        FLOOR,
        {"Dev": HIGHER},
        "Dev",
    ),
    Claim(
        "table7",
        TASKS,
        "The feature-based approach (the last four layers concatenated) comes "
        "within 0.3 F1 of fine-tuning",
        "concat_last_four_hidden",
        "Fine-tuning",
        {"Dev F1": SAME},
        "Dev F1",
        ("table7", FLOOR),
    ),
]


# The tables whose claims compare BERT with other systems, which are not run here: the summary
# shows ours beside the paper's, with no verdict: (table, schedule, the paper's claim, row,
# column).
UNCOMPARED = (
    ("table1", "long", "BERT-BASE is above every earlier system on GLUE",
     "ours (L-4_H-128_A-2)", "Average"),
    ("table2", "long", "BERT-BASE is above every earlier system on SQuAD 1.1",
     "ours (L-4_H-128_A-2)", "F1"),
    ("table3", "long", "BERT-LARGE is above every earlier system on SQuAD 2.0",
     "ours (L-4_H-128_A-2)", "F1"),
)  # fmt: skip
NOT_COMPARED = "no verdict: the paper's comparison is with systems not run here"


def read(
    claim: Claim, schedule: str, cells_of: Callable[[str, str], dict], paper: dict
) -> list[Reading]:
    """Each column's reading of `claim` at `schedule`; `cells_of(schedule, table)`: the
    record's {(row, column): Cell} (record.cells of the lines, or doc_tables.Record.cells,
    which computes each table and schedule's once); `paper`: {(table, row, column): the
    paper's number as written}. A column whose rows have no runs (yet, or at this schedule)
    is left out."""
    found = cells_of(schedule, claim.table)
    floors = cells_of(schedule, claim.floor[0]) if claim.floor else {}
    readings = []
    for column, says in claim.columns.items():
        a, b = found.get((claim.a, column)), found.get((claim.b, column))
        if a is None or b is None:
            continue
        floor = floors.get((claim.floor[1], column)) if claim.floor else None
        higher_is_better = column not in PERPLEXITIES
        theirs = tuple(paper.get((claim.table, row, column), "-") for row in (claim.a, claim.b))
        found_verdict = verdict(a, b, says, floor, higher_is_better)
        readings.append(Reading(column, schedule, theirs, a, b, floor, found_verdict))
    return readings
