"""Writes a small synthetic task in SWAG's CSV format (train.csv, val.csv, test.csv), for
running run_swag.py where SWAG itself is not at hand. It only shows the pipeline runs: the
numbers say nothing about SWAG.

Each context (sent1) names an object ("A cup."); the right ending names the same object
(sent2 "Then the", ending "cup.") and the three wrong ones other objects, so only the context
tells the right ending (25% by chance). Seeded: the same flags write the same files.

    python scripts/swag_sample.py --output_dir=output/swag_sample --train_examples=3000
"""

from __future__ import annotations

import csv
import os
import random

from bert_tf import cli
from bert_tf.io.fileio import atomic_open
from bert_tf.options import Options, check_options, non_negative, option, options
from bert_tf.swag.data import ENDINGS, NUM_CHOICES, SPLIT_FILES

HEADER = ["video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source", *ENDINGS]
# Few objects and short sentences: a random BERT-Tiny then learns the task within the paper's
# 3 epochs over 3,000 examples (lr 2e-4, ~93% on Dev; with longer sentences, such as "The man
# holds a dog." and "Then he puts down the dog.", it often stays at chance that long).
OBJECTS = ["ball", "book", "cup", "hat", "phone", "box", "dog", "cat"]


def make_rows(count: int, rng: random.Random, labelled: bool, first_id: int) -> list[list[str]]:
    rows = []
    for i in range(count):
        objects = rng.sample(OBJECTS, NUM_CHOICES)  # objects[0] is the context's
        sent1, sent2 = f"A {objects[0]}.", "Then the"
        order = list(range(NUM_CHOICES))
        rng.shuffle(order)
        endings = [f"{objects[k]}." for k in order]
        row = [f"synthetic{(first_id + i) // 4}", str(first_id + i), f"{sent1} {sent2}"]
        row += [sent1, sent2, "gold", *endings]
        if labelled:
            row.append(str(order.index(0)))
        rows.append(row)
    return rows


def write_csv(path: str, header: list[str], rows: list[list[str]]) -> None:
    with atomic_open(path) as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


@options
class SwagSampleOptions(Options):
    output_dir: str = option(None, "Where the SWAG files go.", required=True)
    train_examples: int = option(3000, "Examples in train.csv.", non_negative)
    dev_examples: int = option(200, "Examples in val.csv.", non_negative)
    test_examples: int = option(100, "Examples in test.csv.", non_negative)
    seed: int = option(0, "Seed of the choices.")


def swag_sample(args: SwagSampleOptions) -> None:
    check_options(args)
    rng = random.Random(args.seed)
    first_id = 0
    for split, count in (
        ("train", args.train_examples),
        ("dev", args.dev_examples),
        ("test", args.test_examples),
    ):
        labelled = split != "test"  # SWAG's test.csv has no label column
        header = HEADER + (["label"] if labelled else [])
        path = os.path.join(args.output_dir, SPLIT_FILES[split])
        write_csv(path, header, make_rows(count, rng, labelled, first_id))
        first_id += count


if __name__ == "__main__":
    cli.define_flags(SwagSampleOptions)
    cli.run_with_options(SwagSampleOptions, swag_sample)
