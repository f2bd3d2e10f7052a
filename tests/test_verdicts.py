"""The one verdict rule (scripts/paper/reproduction/verdicts.py), case by case: each word the
record uses follows from the runs' values, and from nothing else."""

from __future__ import annotations

import sys

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "scripts" / "paper"))
from reproduction.verdicts import (  # noqa: E402
    CANNOT_BE_READ,
    CONSISTENT,
    HIGHER,
    HOLDS,
    LOWER,
    NOT_DETECTED,
    REVERSED,
    RULE,
    SAME,
    WORDS,
    Cell,
    clear,
    verdict,
)

TWO_SEEDS = 2


def test_a_cell_is_the_mean_and_sample_spread_of_all_its_runs():
    cell = Cell.of([1, 2, 3, 4], seeds=2)
    assert cell.mean == 2.5
    assert cell.spread == pytest.approx(1.2909944)  # n - 1 in the denominator
    assert Cell.of([7.0]).spread is None


def test_a_difference_is_clear_beyond_twice_its_standard_error():
    a = Cell.of([10.0, 12.0])  # mean 11, s^2 = 2, s^2/n = 1
    # Standard error against an exact value: 1, so the line is at 2.
    assert clear(a, 8.9) == 1 and clear(a, 9.0) == 0 and clear(a, 13.1) == -1
    b = Cell.of([6.0, 8.0])  # the same spread: standard error sqrt(2), the line at 2.83
    assert clear(a, b) == 1 and clear(a, Cell.of([8.0, 10.0])) == 0


@pytest.mark.parametrize(
    ("a", "b", "paper_says", "word"),
    [
        ([55.0, 55.2, 54.8], [52.0, 52.2, 51.8], HIGHER, HOLDS),
        ([55.0, 55.2, 54.8], [52.0, 52.2, 51.8], LOWER, REVERSED),
        ([52.0, 52.2, 51.8], [55.0, 55.2, 54.8], HIGHER, REVERSED),
        ([55.0, 57.0, 53.0], [54.0, 56.0, 52.0], HIGHER, NOT_DETECTED),
        ([55.0, 57.0, 53.0], [54.0, 56.0, 52.0], SAME, CONSISTENT),
        ([55.0, 55.2, 54.8], [52.0, 52.2, 51.8], SAME, REVERSED),
    ],
)
def test_each_verdict_follows_from_the_direction_and_whether_it_is_clear(a, b, paper_says, word):
    found = verdict(Cell.of(a, TWO_SEEDS), Cell.of(b, TWO_SEEDS), paper_says)
    assert (found.word, found.note) == (word, "")


def test_a_cell_of_one_run_cannot_be_read():
    # SST-2 and SQuAD had one run per cell: a 1.1-point gap there is no evidence either way.
    found = verdict(Cell.of([76.7]), Cell.of([77.8, 77.0]), HIGHER)
    assert str(found) == f"{CANNOT_BE_READ} (a cell of one run)"


def test_two_rows_at_the_floor_cannot_be_read_and_one_above_it_can():
    # Issue 94: on QNLI both rows sat at random weights' level (55.8, 56.0 against 56.2).
    no_nsp, ltr = Cell.of([55.8, 55.6, 56.0], 2), Cell.of([56.0, 56.3, 55.7], 2)
    assert verdict(no_nsp, ltr, HIGHER, floor=56.2).word == CANNOT_BE_READ
    bert = Cell.of([66.3, 66.0, 66.6], 2)
    assert verdict(bert, ltr, HIGHER, floor=56.2).word == HOLDS
    # A metric where lower is better (perplexity): the floor is above.
    assert verdict(Cell.of([9, 9.2], 2), Cell.of([20, 20.4], 2), LOWER, 30, False).word == HOLDS
    assert verdict(Cell.of([30, 30.2], 2), Cell.of([31, 30], 2), LOWER, 30, False).word == (
        CANNOT_BE_READ
    )


def test_a_row_of_one_pre_training_seed_says_so_beside_its_verdict():
    found = verdict(Cell.of([55.0, 55.2, 54.8], 2), Cell.of([52.0, 52.2, 51.8], 1), HIGHER)
    assert str(found) == "holds (one pre-training seed)"


def test_the_rule_is_three_lines_naming_every_word():
    assert len(RULE) == 3
    assert all(f"*{word}*" in " ".join(RULE) for word in WORDS)


def test_cells_whose_runs_survive_only_as_mean_and_spread_pool_exactly():
    # The first seed's runs of a cell survive as their mean and spread alone; pooled with the
    # second seed's runs, the cell is the one its values would give.
    first, second = [54.9, 56.0, 53.8], [52.1, 53.5]
    kept = Cell.of(first)
    pooled = Cell.pooled([Cell(kept.n, kept.mean, kept.spread), Cell.of(second)])
    whole = Cell.of(first + second, seeds=2)
    assert (pooled.n, pooled.seeds) == (5, 2)
    assert pooled.mean == pytest.approx(whole.mean) and pooled.spread == pytest.approx(whole.spread)
    assert Cell.pooled([Cell.of([3.0])]).spread is None
