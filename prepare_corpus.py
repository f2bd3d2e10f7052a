r"""Raw books or Wikipedia-style paragraphs into create_pretraining_data.py's input: one sentence
per line, a blank line between documents.

    # Project Gutenberg books (our stand-in for BooksCorpus), one document per book:
    python prepare_corpus.py --input_file='books/*.txt.gz' --input_format=books \
      --output_file=corpus/books.txt
    # WikiExtractor output or one paragraph per line (a blank line between articles):
    python prepare_corpus.py --input_file='wiki/*/wiki_*' --input_format=paragraphs \
      --output_file=corpus/wiki.txt

Files may be gzipped (`.gz`). Documents whose text repeats an earlier one exactly are dropped
(Project Gutenberg holds some books twice), so that text seen in pre-training cannot reappear in
a held-out split made from other files.
"""

from __future__ import annotations

import gzip
import hashlib
import logging

from bert_tf import cli
from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import TextInputOptions, atomic_open, check_output_file, decode_utf8
from bert_tf.options import check_options, non_negative, one_of, option, options, positive
from bert_tf.pretraining.corpus import book_document, corpus_text, paragraph_documents
from bert_tf.pretraining.documents import expand_input_files
from bert_tf.training.progress import Progress


@options
class PrepareCorpusOptions(TextInputOptions):
    input_file: str = option(
        None, "Raw text files, .txt or .txt.gz (comma-separated, globs allowed).", required=True
    )
    output_file: str = option(None, "Where the corpus goes (one sentence per line).", required=True)
    input_format: str = option(
        "books",
        "books: Project Gutenberg files (licence cut off, hard-wrapped paragraphs joined), one "
        "document per file; paragraphs: one paragraph per line, a blank line or WikiExtractor's "
        "<doc>...</doc> between documents.",
        one_of("books", "paragraphs"),
    )
    heldout_file: str | None = option(
        None,
        "With --num_heldout_documents: where the held-out documents go (for held-out perplexity "
        "and evaluation text that pre-training never saw).",
    )
    num_heldout_documents: int = option(
        0,
        "Documents taken out of --output_file into --heldout_file, evenly spaced over the input.",
        non_negative,
    )
    min_sentences: int = option(
        2, "Documents with fewer sentences are dropped (NSP needs two).", positive
    )

    def check(self) -> None:
        super().check()
        if bool(self.num_heldout_documents) != bool(self.heldout_file):
            raise InputError(
                f"--num_heldout_documents={self.num_heldout_documents} --heldout_file="
                f"{self.heldout_file}: give both (a positive count and a file) or neither"
            )
        check_output_file(self.output_file, "--output_file")
        if self.heldout_file:
            check_output_file(self.heldout_file, "--heldout_file")


def read_text(path: str, strict_utf8: bool = False) -> str:
    """A text file, gzipped or not, as str (bytes that are not UTF-8 dropped and counted in a
    warning, or with `strict_utf8` an error)."""
    with filesystem.open_file(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise InputError(f"--input_file: {path} is not a whole gzip file ({e})") from None
    return decode_utf8(data, path, strict_utf8)


def documents_of(path: str, input_format: str, strict_utf8: bool = False) -> list[list[str]]:
    text = read_text(path, strict_utf8)
    if input_format == "books":
        return [book_document(text)]
    return list(paragraph_documents(text.split("\n")))


def heldout_indexes(num_documents: int, num_heldout: int) -> set[int]:
    """`num_heldout` indexes evenly spaced over `num_documents` (the middle of each stretch)."""
    step = num_documents / num_heldout
    return {int(step * (i + 0.5)) for i in range(num_heldout)}


def prepare_corpus(options: PrepareCorpusOptions) -> None:
    check_options(options)
    input_files = expand_input_files(options.input_file)
    documents = []
    seen: set[bytes] = set()
    duplicates = short = 0
    for path in Progress("prepare_corpus", len(input_files), "files").counted(input_files):
        for document in documents_of(path, options.input_format, options.strict_utf8):
            digest = hashlib.sha1("\n".join(document).encode()).digest()
            if digest in seen:
                duplicates += 1
                logging.info("%s: a document repeats an earlier one; dropped", path)
            elif len(document) < options.min_sentences:
                short += 1
            else:
                seen.add(digest)
                documents.append(document)
    if len(documents) <= options.num_heldout_documents:
        raise InputError(
            f"--input_file={options.input_file}: {len(documents)} documents of at least "
            f"{options.min_sentences} sentences, expected more than --num_heldout_documents="
            f"{options.num_heldout_documents}"
        )
    heldout = (
        heldout_indexes(len(documents), options.num_heldout_documents)
        if options.num_heldout_documents
        else set()
    )
    splits = {options.output_file: [d for i, d in enumerate(documents) if i not in heldout]}
    if heldout:
        splits[options.heldout_file] = [documents[i] for i in sorted(heldout)]
    for path, split in splits.items():
        with atomic_open(path) as out:
            out.writelines(corpus_text(split))
        logging.info(
            "Wrote %s: %d documents, %d sentences, %d words",
            path,
            len(split),
            sum(len(d) for d in split),
            sum(len(s.split()) for d in split for s in d),
        )
    logging.info("Dropped %d repeated and %d too short documents", duplicates, short)


cli.define_flags(PrepareCorpusOptions)

if __name__ == "__main__":
    cli.run_with_options(PrepareCorpusOptions, prepare_corpus)
