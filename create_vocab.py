r"""Learns a WordPiece vocab.txt from a corpus, for pre-training from scratch on a new domain.

    python create_vocab.py --input_file=corpus/*.txt --output_file=vocab.txt \
      --vocab_size=30522 --do_lower_case=True

The special tokens take the released vocabularies' ids ([PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102,
[MASK] 103); see bert_tf/vocab_builder.py for the layout. Set bert_config.json's vocab_size to
the number of lines written (the learner may return a little fewer than asked).
"""

from __future__ import annotations

import logging

from absl import flags

from bert_tf import cli
from bert_tf.fileio import atomic_write_text, check_output_file
from bert_tf.pretraining.documents import expand_input_files
from bert_tf.vocab_builder import build_vocab, count_words

FLAGS = flags.FLAGS
flags.DEFINE_string("input_file", None, "Text files (comma-separated, globs allowed).")
flags.DEFINE_string("output_file", None, "Where vocab.txt goes.")
flags.DEFINE_integer("vocab_size", 30522, "The most tokens the vocabulary may hold.")
flags.DEFINE_bool("do_lower_case", True, "Lower-case (and strip accents), as for uncased models.")
flags.DEFINE_bool(
    "strict_utf8",
    False,
    "Stop at bytes that are not UTF-8 instead of dropping them (dropped bytes are counted in "
    "a warning per file).",
)
flags.DEFINE_integer(
    "min_count", 10, "Lower bound of the learner's frequency threshold (tensorflow-text's)."
)


def main(argv: list[str]) -> None:
    del argv
    cli.require(FLAGS, "input_file", "output_file")
    check_output_file(FLAGS.output_file, "--output_file")
    input_files = expand_input_files(FLAGS.input_file)
    counts = count_words(input_files, FLAGS.do_lower_case, FLAGS.strict_utf8)
    logging.info("Counted %d distinct words", len(counts))
    vocab = build_vocab(counts, FLAGS.vocab_size, lower_thresh=FLAGS.min_count)
    atomic_write_text(FLAGS.output_file, "".join(token + "\n" for token in vocab))
    logging.info("Wrote %d tokens to %s", len(vocab), FLAGS.output_file)


if __name__ == "__main__":
    cli.run(main)
