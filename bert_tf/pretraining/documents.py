"""The corpus: one sentence per line, a blank line between documents."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence

from bert_tf.errors import InputError
from bert_tf.fileio import read_lines
from bert_tf.tokenization import FullTokenizer

# A document is a list of segments (its non-empty lines), each a list of WordPiece ids.
Document = list[list[int]]


def expand_input_files(input_file: str, flag: str = "--input_file") -> list[str]:
    """Comma-separated patterns, each glob-expanded in order, as the original's flag."""
    files: list[str] = []
    for pattern in input_file.split(","):
        if not pattern:
            continue
        matches = sorted(glob.glob(pattern))
        if not matches:
            raise InputError(f"{flag}={input_file}: no file matches {pattern}")
        files.extend(matches)
    if not files:
        raise InputError(f"{flag}={input_file!r}: expected one or more files")
    return files


def read_documents(input_files: Sequence[str], tokenizer: FullTokenizer) -> list[Document]:
    """Tokenizes every line; a blank line starts a new document; empty documents are dropped.

    As the original: a line whose tokens are empty (only control characters, say) adds nothing
    but does not start a document either; only a line that is blank after `strip()` does.
    """
    documents: list[Document] = [[]]
    vocab = tokenizer.vocab
    for path in input_files:
        if not os.path.isfile(path):
            raise InputError(f"--input_file: {path} is not a file")
        for line in read_lines(path):
            line = line.strip()
            if not line:
                documents.append([])
            tokens = tokenizer.tokenize(line)
            if tokens:
                documents[-1].append([vocab[token] for token in tokens])
    return [document for document in documents if document]
