r"""Learns a WordPiece vocab.txt from a corpus, for pre-training from scratch on a new domain.

    python create_vocab.py --input_file=corpus/*.txt --output_file=vocab.txt \
      --vocab_size=30522 --do_lower_case=True

The special tokens take the released vocabularies' ids ([PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102,
[MASK] 103); see bert_tf/text/vocab_builder.py for the layout. Set bert_config.json's vocab_size to
the number of lines written (the learner may return a little fewer than asked).
"""

from __future__ import annotations

import logging

from bert_tf import cli
from bert_tf.io.fileio import TextInputOptions, atomic_write_text, check_output_file
from bert_tf.options import check_options, option, options, positive
from bert_tf.pretraining.documents import expand_input_files
from bert_tf.text.vocab_builder import build_vocab, count_words


@options
class CreateVocabOptions(TextInputOptions):
    input_file: str = option(None, "Text files (comma-separated, globs allowed).", required=True)
    output_file: str = option(None, "Where vocab.txt goes.", required=True)
    vocab_size: int = option(30522, "The most tokens the vocabulary may hold.", positive)
    do_lower_case: bool = option(True, "Lower-case (and strip accents), as for uncased models.")
    min_count: int = option(
        10, "Lower bound of the learner's frequency threshold (tensorflow-text's).", positive
    )

    def check(self) -> None:
        super().check()
        check_output_file(self.output_file, "--output_file")


def create_vocab(options: CreateVocabOptions) -> None:
    check_options(options)
    input_files = expand_input_files(options.input_file)
    counts = count_words(input_files, options.do_lower_case, options.strict_utf8)
    logging.info("Counted %d distinct words", len(counts))
    vocab = build_vocab(counts, options.vocab_size, lower_thresh=options.min_count)
    atomic_write_text(options.output_file, "".join(token + "\n" for token in vocab))
    logging.info("Wrote %d tokens to %s", len(vocab), options.output_file)


cli.define_flags(CreateVocabOptions)

if __name__ == "__main__":
    cli.run_with_options(CreateVocabOptions, create_vocab)
