"""The one rule that reads a comparison of two cells of ours as a verdict on a claim of the
paper (issue 94): every verdict in docs/ is computed here from the runs' values, none is
written by hand.

    bert = Cell.of([54.9, 55.8, 53.7, 54.1], seeds=2)
    no_nsp = Cell.of([52.7, 52.3, 53.1], seeds=1)
    verdict(bert, no_nsp, paper_says=HIGHER)     # Verdict("holds", "one pre-training seed")

A cell's runs are all its values: fine-tuning restarts and pre-training seeds together.
"""

from __future__ import annotations

import dataclasses
import math
import statistics

# The verdict words, each defined once.
HOLDS = "holds"  # the paper's direction, clear
REVERSED = "reversed"  # clear, the other way (or a clear difference where the paper finds none)
NOT_DETECTED = "not detected"  # not clear
CONSISTENT = "consistent"  # not clear, where the paper finds no difference either
CANNOT_BE_READ = "cannot be read"  # a cell of one run, or both rows at the floor
WORDS = (HOLDS, REVERSED, NOT_DETECTED, CONSISTENT, CANNOT_BE_READ)

# What the paper says of row a against row b.
HIGHER, LOWER, SAME = 1, -1, 0

# The rule in three lines, as the record opens with it.
RULE = (
    "A cell is the mean of all its runs (fine-tuning restarts and pre-training seeds together); "
    "its spread, their sample standard deviation.",
    "A difference is clear when it exceeds twice its standard error, sqrt(s1²/n1 + s2²/n2): "
    "*holds* (the paper's direction), *reversed* (the other), else *not detected* "
    "(*consistent* where the paper finds no difference).",
    "A cell of one run, or neither row clearly above the floor (random weights' cell, or the "
    "majority class) by the same test: *cannot be read*.",
)


@dataclasses.dataclass(frozen=True)
class Cell:
    """The runs of one row and column: how many, their mean and sample spread, and how many
    pre-training seeds they come from. Kept as (n, mean, spread) rather than the values, so
    that runs whose values were lost and only their mean and spread survive still count."""

    n: int
    mean: float
    spread: float | None = None  # the sample standard deviation; None for one run
    seeds: int = 1

    @classmethod
    def of(cls, runs, seeds: int = 1) -> Cell:
        runs = [float(run) for run in runs]
        spread = statistics.stdev(runs) if len(runs) > 1 else None
        return cls(len(runs), statistics.fmean(runs), spread, seeds)

    @classmethod
    def pooled(cls, parts: list[Cell]) -> Cell:
        """All of `parts`' runs as one cell: the mean and sample spread of their union, exact
        from each part's n, mean and spread; their seeds added."""
        n = sum(part.n for part in parts)
        mean = sum(part.n * part.mean for part in parts) / n
        # The union's sum of squares: each part's own plus its mean's distance from the whole's.
        squares = sum((part.n - 1) * (part.spread or 0.0) ** 2 + part.n * (part.mean - mean) ** 2
                      for part in parts)  # fmt: skip
        spread = math.sqrt(squares / (n - 1)) if n > 1 else None
        return cls(n, mean, spread, sum(part.seeds for part in parts))

    @property
    def variance_of_mean(self) -> float:
        """s² / n; 0 for one run (a floor of one run is taken as exact)."""
        return (self.spread or 0.0) ** 2 / self.n


@dataclasses.dataclass(frozen=True)
class Verdict:
    word: str
    note: str = ""  # what the reader should know beside it (one seed, one run, the floor)

    def __str__(self) -> str:
        return f"{self.word} ({self.note})" if self.note else self.word


def clear(a: Cell, b: Cell | float) -> int:
    """1 where a is clearly above b, -1 clearly below, 0 not clear (a float: exact)."""
    b = b if isinstance(b, Cell) else Cell(1, float(b))
    difference = a.mean - b.mean
    if abs(difference) <= 2 * math.sqrt(a.variance_of_mean + b.variance_of_mean):
        return 0
    return 1 if difference > 0 else -1


def verdict(
    a: Cell,
    b: Cell,
    paper_says: int,
    floor: Cell | float | None = None,
    higher_is_better: bool = True,
) -> Verdict:
    """The verdict on the paper's claim that row a is `paper_says` (HIGHER, LOWER, SAME) than
    row b, by `RULE`; `floor`: the value no better than chance (random weights' cell, or
    the majority class), in the metric's direction (`higher_is_better`)."""
    if a.n < 2 or b.n < 2:
        return Verdict(CANNOT_BE_READ, "a cell of one run")
    better = 1 if higher_is_better else -1
    if floor is not None and all(better * clear(cell, floor) <= 0 for cell in (a, b)):
        return Verdict(CANNOT_BE_READ, "both rows at the floor")
    # A spread without the pre-training's own variance in it says less: said beside the word.
    note = "one pre-training seed" if min(a.seeds, b.seeds) < 2 else ""
    found = clear(a, b)
    if paper_says == SAME:
        return Verdict(REVERSED if found else CONSISTENT, note)
    if not found:
        return Verdict(NOT_DETECTED, note)
    return Verdict(HOLDS if found == paper_says else REVERSED, note)
