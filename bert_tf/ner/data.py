"""CoNLL-2003 data: the column files read into documents of tagged sentences.

The format (Tjong Kim Sang and De Meulder, 2003): one word per line, its columns separated by
spaces (word, POS, chunk, NER tag), the tag last; a blank line ends a sentence; a
`-DOCSTART-` line starts a document. The tags are IOB1 (the original release: B- only where
two entities of one type touch) or IOB2 (B- at every entity's start); both are read, and the
model learns IOB2, the scheme where a word's tag does not depend on its neighbour's type.

Every line of a file must have as many columns as its first; every tag must be "O" or
"B-TYPE"/"I-TYPE". A file that breaks either fails with its file:line.
"""

from __future__ import annotations

import dataclasses
import io
import os
from collections.abc import Iterable, Sequence

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.io.fileio import read_text
from bert_tf.io.tfds import load_prepared
from bert_tf.model_io.source import LABELS_FILE, ModelSource
from bert_tf.ner.tagging import detect_scheme, iob1_to_iob2, iob2_to_iob1, split_tag

DOCSTART = "-DOCSTART-"
# The split -> its file names in --data_dir, first found wins: the usual names, then the
# original release's.
SPLIT_FILES = {
    "train": ("train.txt", "eng.train"),
    "dev": ("valid.txt", "dev.txt", "eng.testa"),
    "test": ("test.txt", "eng.testb"),
}


@dataclasses.dataclass
class Sentence:
    """One sentence: its words, their IOB2 tags and the file's columns of each word."""

    words: list[str]
    tags: list[str]  # IOB2, whatever the file's scheme
    columns: list[list[str]]  # each word's line, split (the tag as in the file, last)
    line: int  # the file line of the first word (word i is on line + i)


@dataclasses.dataclass
class Document:
    sentences: list[Sentence]
    docstart: list[str] | None = None  # the -DOCSTART- line's columns, when it had one


@dataclasses.dataclass
class ConllFile:
    """A read file: `source` names it in messages, `scheme` is "IOB1" or "IOB2"."""

    source: str
    documents: list[Document]
    scheme: str
    num_columns: int

    @property
    def sentences(self) -> list[Sentence]:
        return [s for d in self.documents for s in d.sentences]

    def __len__(self) -> int:
        return len(self.sentences)

    def entity_types(self) -> set[str]:
        return {split_tag(tag)[1] for s in self.sentences for tag in s.tags if tag != "O"}

    def to_file_scheme(self, tags: Sequence[str]) -> list[str]:
        """IOB2 tags of one sentence in this file's scheme."""
        return iob2_to_iob1(tags) if self.scheme == "IOB1" else list(tags)


def find_split_file(data_dir: str, split: str) -> str:
    """The file of `split` (train, dev, test) in data_dir.

    Raises:
        InputError: none of the split's names is there.
    """
    for name in SPLIT_FILES[split]:
        path = os.path.join(data_dir, name)
        if filesystem.isfile(path):
            return path
    raise InputError(
        f"--data_dir={data_dir}: no {split} file (expected one of {', '.join(SPLIT_FILES[split])})"
    )


def read_conll_file(path: str) -> ConllFile:
    """Reads a CoNLL column file (IOB1 or IOB2).

    Raises:
        InputError: a missing or empty file, a line with another column count than the
            first, a line with a single column, or a malformed tag (file:line each).
    """
    if not filesystem.isfile(path):
        raise InputError(f"{path}: no such file")
    return parse_conll_lines(io.StringIO(read_text(path, "a CoNLL column file")), path)


def parse_conll_lines(lines: Iterable[str], source: str) -> ConllFile:
    """`read_conll_file` on lines already read; `source` names them in messages."""
    documents = [Document([])]
    words: list[str] = []
    columns: list[list[str]] = []
    first_line = 0
    num_columns = None
    column_line = 0

    def end_sentence() -> None:
        if words:
            tags = [c[-1] for c in columns]
            documents[-1].sentences.append(Sentence(list(words), tags, list(columns), first_line))
            words.clear()
            columns.clear()

    for number, line in enumerate(lines, start=1):
        cells = line.split()
        if not cells:
            end_sentence()
            continue
        if num_columns is None:
            num_columns, column_line = len(cells), number
            if num_columns < 2:
                raise InputError(
                    f"{source}:{number}: 1 column; expected the word and its tag (CoNLL "
                    "columns: word POS chunk tag, separated by spaces)"
                )
        if len(cells) != num_columns:
            raise InputError(
                f"{source}:{number}: {len(cells)} columns; expected {num_columns} as on line "
                f"{column_line}"
            )
        if cells[0] == DOCSTART:
            end_sentence()
            if documents[-1].sentences or documents[-1].docstart:
                documents.append(Document([]))
            documents[-1].docstart = cells
            continue
        try:
            split_tag(cells[-1])
        except InputError as e:
            raise InputError(f"{source}:{number}: {e}") from None
        if not words:
            first_line = number
        words.append(cells[0])
        columns.append(cells)
    end_sentence()
    documents = [d for d in documents if d.sentences]
    if not documents:
        raise InputError(f"{source}: no sentences (expected CoNLL columns: word ... tag)")
    scheme = detect_scheme(s.tags for d in documents for s in d.sentences)
    if scheme == "IOB1":
        for document in documents:
            for sentence in document.sentences:
                sentence.tags = iob1_to_iob2(sentence.tags)
    return ConllFile(source, documents, scheme, num_columns)


def label_list(entity_types: Iterable[str]) -> list[str]:
    """The classifier's labels: O, then B- and I- of each type in sorted order."""
    return ["O"] + [f"{prefix}-{t}" for t in sorted(entity_types) for prefix in ("B", "I")]


def check_tags(conll: ConllFile, labels: Sequence[str], labels_source: str) -> None:
    """Raises `InputError` at the first word whose tag is not among `labels` (the tag set
    the model is trained on, from `labels_source`)."""
    known = set(labels)
    for sentence in conll.sentences:
        for index, tag in enumerate(sentence.tags):
            if tag not in known:
                file_tag = sentence.columns[index][-1]
                types = sorted({split_tag(t)[1] for t in labels if t != "O"})
                raise InputError(
                    f"{conll.source}:{sentence.line + index}: tag {file_tag} is not in the tag "
                    f"set of {labels_source} (types {', '.join(types) or 'none'}); the two "
                    "files must use the same tags"
                )


def tfds_conll2003(split: str, data_dir: str | None) -> ConllFile:
    """A split (train, dev, test) of tensorflow-datasets' `conll2003`, prepared beforehand.

    tfds keeps no -DOCSTART- lines, so the split reads as one document: the context windows
    then run across the original's document boundaries.

    Raises:
        InputError: the data is not prepared in data_dir.
    """
    name = "conll2003"
    rows, info = load_prepared(name, split, data_dir)
    names = {key: info.features[key].feature.names for key in ("pos", "chunks", "ner")}
    lines = []
    for row in rows:
        for i, token in enumerate(row["tokens"]):
            cells = [token.decode("utf-8")]
            cells += [names[key][row[key][i]] for key in ("pos", "chunks", "ner")]
            lines.append(" ".join(cells))
        lines.append("")
    return parse_conll_lines(lines, f"{name}[{split}]")


def resolve_labels(
    output: ModelSource, init_source: ModelSource | None, train: ConllFile | None
) -> tuple[list[str], str]:
    """The label set and where it comes from: the training file's entity types when
    training (checked against an earlier run's labels in the output_dir `output`), else
    `output`'s labels, else the labels of the model `init_source` (--init_checkpoint).

    Raises:
        InputError: the training file's tags differ from the earlier run's, or no label set
            is found.
    """
    saved, saved_file = output.labels, os.path.join(output.path, LABELS_FILE)
    if train is not None:
        labels = label_list(train.entity_types())
        if saved is not None and saved != labels:
            raise InputError(
                f"{train.source}: its tags ({' '.join(labels)}) differ from the tags the model "
                f"in --output_dir was trained on ({saved_file}: {' '.join(saved)}); use "
                "another --output_dir"
            )
        return labels, train.source
    if saved is None and init_source is not None and init_source.labels:
        saved, saved_file = init_source.labels, os.path.join(init_source.directory, LABELS_FILE)
    if saved is None:
        raise InputError(
            f"no {LABELS_FILE} in --output_dir={output.path}"
            + (" or beside --init_checkpoint" if init_source else "")
            + ": the label set is written there when the model is trained (--do_train)"
        )
    return saved, saved_file
