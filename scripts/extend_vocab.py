r"""Puts a domain's words into a model's vocab.txt in place of its `[unusedN]` tokens, for
continued pre-training on one's own text (the original's README suggests it; it ships no tool).

Every other token keeps its id, so the model's checkpoint still fits: the `[unusedN]` rows are
the ones it never trained, and continued pre-training teaches them. The words are the most
frequent whole words of the corpus that the vocab splits into several pieces (or `[UNK]`), or
those of --words_file; --max_words caps them (the released BERT-Base vocab has 994 slots).

    python scripts/extend_vocab.py --vocab_file=uncased_L-12_H-768_A-12/vocab.txt \
      --input_file=corpus/*.txt --output_file=domain/vocab.txt --max_words=500

Then write the pre-training records with the new vocab (create_pretraining_data.py
--vocab_file=domain/vocab.txt) and continue from the model (run_pretraining.py
--init_checkpoint=uncased_L-12_H-768_A-12): see docs/continued_pretraining.md.
"""

from __future__ import annotations

import logging
import os

from bert_tf import cli
from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import TextInputOptions, atomic_write_text, check_output_file, read_lines
from bert_tf.options import check_options, option, options, positive
from bert_tf.pretraining.documents import expand_input_files
from bert_tf.text.vocab_builder import count_words, extend_vocab, split_words, wordpiece_count
from bert_tf.tokenization import BasicTokenizer, load_vocab

# WordPiece gives a longer word [UNK] whatever the vocab holds (the original's limit).
MAX_WORD_CHARS = 200


@options
class ExtendVocabOptions(TextInputOptions):
    vocab_file: str = option(None, "The model's vocab.txt (it is not changed).", required=True)
    output_file: str = option(
        None, "Where the extended vocab.txt goes (not --vocab_file).", required=True
    )
    input_file: str | None = option(
        None, "The domain's text files (comma-separated, globs allowed): its words, counted."
    )
    words_file: str | None = option(
        None, "Instead of choosing from --input_file: the words to add, one a line, in order."
    )
    max_words: int | None = option(
        None, "The most words to add (default: as many as the vocab has [unusedN] slots).", positive
    )
    do_lower_case: bool | None = option(
        None,
        "Lower-case the words, as the model does (default: as the model's files or name say, "
        "else True).",
    )

    def check(self) -> None:
        super().check()
        if not (self.input_file or self.words_file):
            raise InputError("give --input_file (the domain's text) or --words_file (the words)")
        check_output_file(self.output_file, "--output_file")
        if filesystem.absolute(self.output_file) == filesystem.absolute(self.vocab_file) or (
            os.path.exists(self.output_file) and os.path.samefile(self.output_file, self.vocab_file)
        ):
            raise InputError(
                f"--output_file={self.output_file} is --vocab_file; write the extended vocab "
                "elsewhere (the model's own must stay as its checkpoint was trained)"
            )


def listed_words(path: str, tokenizer: BasicTokenizer) -> list[str]:
    """The words of `path`, one a line, as the model's tokenizer writes them (lower-cased for
    an uncased model). Raises `InputError` for a line it would split: WordPiece never sees it
    whole, so as a token it could never occur."""
    words = []
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        tokens = tokenizer.tokenize(line)
        if len(tokens) != 1:
            raise InputError(
                f"--words_file={path}:{number}: {line.strip()!r} is {len(tokens)} words to BERT's "
                f"tokenizer ({' '.join(tokens)}); expected one word a line (punctuation splits)"
            )
        words.append(tokens[0])
    return words


def main(options: ExtendVocabOptions) -> None:
    check_options(options)
    vocab = load_vocab(options.vocab_file)
    from bert_tf.model_io.source import ModelSource  # TensorFlow: once the flags pass

    model = ModelSource(os.path.dirname(options.vocab_file) or ".")
    do_lower_case = model.do_lower_case(options.do_lower_case, "--vocab_file")
    counts = {}
    if options.input_file:
        files = expand_input_files(options.input_file)
        counts = count_words(files, do_lower_case, options.strict_utf8)
    if options.words_file:
        words = listed_words(options.words_file, BasicTokenizer(do_lower_case=do_lower_case))
    else:
        words = [word for word in split_words(counts, vocab) if len(word) <= MAX_WORD_CHARS]
    try:
        extended, added = extend_vocab(list(vocab), words[: options.max_words])
    except InputError as e:
        raise InputError(f"--vocab_file={options.vocab_file}: {e}") from None
    atomic_write_text(options.output_file, "".join(token + "\n" for token in extended))
    replaced = [
        vocab_token
        for vocab_token, token in zip(vocab, extended, strict=True)
        if vocab_token != token
    ]
    logging.info(
        "Wrote %s: %d words in place of %s (ids %s), %d [unusedN] slots left; added: %s",
        options.output_file, len(added), f"{replaced[0]}..{replaced[-1]}" if added else "none",
        f"{vocab[replaced[0]]}-{vocab[replaced[-1]]}" if added else "-",
        sum(1 for token in extended if token.startswith("[unused")), " ".join(added[:20])
        + (f" and {len(added) - 20} more" if len(added) > 20 else ""),
    )  # fmt: skip
    if counts:
        before = wordpiece_count(counts, vocab)
        after = wordpiece_count(counts, {token: i for i, token in enumerate(extended)})
        logging.info(
            "The corpus tokenizes into %d WordPiece tokens, %d before (%.1f%% fewer)",
            after, before, 100 * (before - after) / max(before, 1),
        )  # fmt: skip


cli.define_flags(ExtendVocabOptions)

if __name__ == "__main__":
    cli.run_with_options(ExtendVocabOptions, main)
