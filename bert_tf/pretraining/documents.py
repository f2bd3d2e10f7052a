"""The corpus: one sentence per line, a blank line between documents."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import read_lines
from bert_tf.io.tfds import load_prepared
from bert_tf.pretraining.corpus import split_sentences
from bert_tf.tokenization import FullTokenizer

# A document is a list of segments (its non-empty lines), each a list of WordPiece ids.
Document = list[list[int]]


def expand_input_files(input_file: str, flag: str = "--input_file") -> list[str]:
    """Comma-separated patterns, each glob-expanded in order, as the original's flag (local
    paths with no TensorFlow import; URLs, gs://, through `tf.io.gfile`)."""
    files: list[str] = []
    for pattern in input_file.split(","):
        if not pattern:
            continue
        matches = filesystem.glob(pattern)
        for folder in filter(filesystem.isdir, matches):
            raise InputError(
                f"{flag}={input_file}: {folder} is a folder; expected files (a pattern such "
                f"as {os.path.join(folder, '*')} names the files in it)"
            )
        if not matches:
            raise InputError(f"{flag}={input_file}: no file matches {pattern}")
        files.extend(matches)
    if not files:
        raise InputError(f"{flag}={input_file!r}: expected one or more files")
    return files


def read_documents(
    input_files: Sequence[str], tokenizer: FullTokenizer, strict_utf8: bool = False
) -> list[Document]:
    """Tokenizes every line; a blank line starts a new document; empty documents are dropped.

    Bytes that are not UTF-8 are dropped, as the original, and counted in a warning per file;
    `strict_utf8` makes them an `InputError`.

    As the original: a line whose tokens are empty (only control characters, say) adds nothing
    but does not start a document either; only a line that is blank after `strip()` does.
    """
    documents: list[Document] = [[]]
    for path in input_files:
        if not filesystem.isfile(path):
            raise InputError(f"--input_file: {path} is not a file")
        for line in read_lines(path, strict_utf8):
            line = line.strip()
            if not line:
                documents.append([])
            tokens = tokenizer.tokenize(line)
            if tokens:
                documents[-1].append(tokenizer.convert_tokens_to_ids(tokens))
    return [document for document in documents if document]


def documents_from_texts(texts: Iterable[str], tokenizer: FullTokenizer) -> list[Document]:
    """One document per text (an article, say), one segment per sentence."""
    documents = []
    for text in texts:
        segments = [tokenizer.tokenize(sentence) for sentence in split_sentences(text)]
        document = [tokenizer.convert_tokens_to_ids(tokens) for tokens in segments if tokens]
        if document:
            documents.append(document)
    return documents


def tfds_texts(name: str, split: str, data_dir: str | None, text_key: str) -> Iterator[str]:
    """The `text_key` field of every example of an already-prepared tensorflow-datasets set."""
    rows, info = load_prepared(name, split, data_dir, flag=f"--tfds_name={name}")
    if text_key not in info.features:
        raise InputError(
            f"--tfds_text_key={text_key}: {name} has the fields {sorted(info.features)}"
        )
    for example in rows:
        yield example[text_key].decode("utf-8", "ignore")
