r"""Writes a small SQuAD file: questions `--skip`..`--skip + --count` of a SQuAD file, with
only their first answer when `--first_answer_only` (which makes a dev file a training file:
the original trains on exactly one answer per question).

    python scripts/squad_sample.py --input_file=dev-v1.1.json --output_file=train.json \
      --count=300 --first_answer_only
"""

from __future__ import annotations

import json

from sample_options import SampleOptions

from bert_tf import cli
from bert_tf.io.fileio import atomic_write_text
from bert_tf.options import check_options, option, options
from bert_tf.squad.data import read_squad_file


@options
class SquadSampleOptions(SampleOptions):
    first_answer_only: bool = option(
        False, "Keep each question's first answer only (a training file of a dev file)."
    )


def squad_sample(args: SquadSampleOptions) -> None:
    check_options(args)
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
    cli.define_flags(SquadSampleOptions)
    cli.run_with_options(SquadSampleOptions, squad_sample)
