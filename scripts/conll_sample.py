r"""Writes the first sentences of a CoNLL column file: `--count` sentences after `--skip`,
with the -DOCSTART- lines of their documents (a small NER data set from the real one).

    python scripts/conll_sample.py --input_file=train.txt --output_file=small/train.txt \
      --count=500
"""

from __future__ import annotations

from sample_options import SampleOptions

from bert_tf import cli
from bert_tf.io.fileio import atomic_write_text
from bert_tf.options import check_options


def conll_sample(args: SampleOptions) -> None:
    check_options(args)
    from bert_tf.ner.data import read_conll_file  # TensorFlow: once the flags pass

    conll = read_conll_file(args.input_file)
    index, lines = 0, []
    for document in conll.documents:
        kept = []
        for sentence in document.sentences:
            if args.skip <= index < args.skip + args.count:
                kept += [" ".join(columns) + "\n" for columns in sentence.columns] + ["\n"]
            index += 1
        if kept:
            lines += (
                [" ".join(document.docstart) + "\n", "\n"] if document.docstart else []
            ) + kept
    atomic_write_text(args.output_file, "".join(lines))


if __name__ == "__main__":
    cli.define_flags(SampleOptions)
    cli.run_with_options(SampleOptions, conll_sample)
