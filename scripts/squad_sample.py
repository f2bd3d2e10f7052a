r"""Writes a small SQuAD file: questions `--skip`..`--skip + --count` of a SQuAD file, with
only their first answer when `--first_answer_only` (which makes a dev file a training file:
the original trains on exactly one answer per question).

    python scripts/squad_sample.py --input_file=dev-v1.1.json --output_file=train.json \
      --count=300 --first_answer_only
"""

from __future__ import annotations

import argparse
import json

from bert_tf.fileio import atomic_write_text
from bert_tf.squad.data import read_squad_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input_file", required=True)
    parser.add_argument("--output_file", required=True)
    parser.add_argument("--skip", type=int, default=0)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--first_answer_only", action="store_true")
    args = parser.parse_args()
    dataset = read_squad_file(args.input_file)
    index, articles = 0, []
    for article in dataset["data"]:
        paragraphs = []
        for paragraph in article["paragraphs"]:
            qas = []
            for qa in paragraph["qas"]:
                if args.skip <= index < args.skip + args.count:
                    if args.first_answer_only:
                        qa = {**qa, "answers": qa["answers"][:1]}
                    qas.append(qa)
                index += 1
            if qas:
                paragraphs.append({**paragraph, "qas": qas})
        if paragraphs:
            articles.append({**article, "paragraphs": paragraphs})
    atomic_write_text(args.output_file, json.dumps({**dataset, "data": articles}))


if __name__ == "__main__":
    main()
