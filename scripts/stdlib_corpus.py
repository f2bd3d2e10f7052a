"""Writes a pre-training corpus made of the Python standard library's documentation strings.

A BERT pre-training demo then needs no download: the text is already on every machine with Python.
The output is the input format of create_pretraining_data.py (as the original's
sample_text.txt): one sentence per line, one blank line between documents. A document is one
top-level module of `sys.stdlib_module_names`: its docstring, then the docstrings of its public
classes (each followed by its own public methods) and functions, sorted by name. Docstrings are
cleaned into prose: doctests, code blocks, signatures and tables are dropped, wrapped lines joined.

    python scripts/stdlib_corpus.py --output_file=output/stdlib_corpus.txt

The same Python installation always gives the same bytes.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import logging
import os
import re
import sys
import types
import warnings

from bert_tf import cli
from bert_tf.io.fileio import atomic_write_text
from bert_tf.options import Options, check_options, non_negative, option, options, positive
from bert_tf.pretraining.corpus import split_sentences


@options
class StdlibCorpusOptions(Options):
    output_file: str = option(None, "Where the corpus text goes.", required=True)
    max_documents: int = option(0, "Stop after this many documents (0: all modules).", non_negative)
    min_sentences: int = option(2, "Drop modules whose document has fewer sentences.", positive)


# Modules whose import opens a browser or prints (antigravity, this), needs a display (tkinter,
# turtle, idlelib), is a test suite or tool rather than a library (test, ensurepip, venv), or is
# not the standard library's own code (setuptools shadows distutils in most environments).
# Printers are listed here rather than detected: a module imported earlier in the process does not
# print again, so detection would make the output depend on what ran before.
EXCLUDED_MODULES = frozenset(
    {
        "antigravity",
        "distutils",
        "ensurepip",
        "idlelib",
        "lib2to3",
        "this",
        "tkinter",
        "turtle",
        "turtledemo",
        "test",
        "venv",
    }
)

_SIGNATURE = re.compile(r"^[\w.]+\(.*\)(\s*->.*)?$")
# Assignments, "f(x) -> y" / "f(x) --> y" signatures, and columns aligned with runs of spaces.
_CODE_OR_TABLE = re.compile(r" = |->|\S {3,}\S")
_REST_ROLE = re.compile(r":[\w:]+:`~?([^`]*)`")
_DOCTEST = (">>>", "...")
_BULLET = re.compile(r"^[-*+] ")


def module_names() -> list[str]:
    """The public top-level standard library modules worth reading, sorted."""
    return sorted(
        name
        for name in sys.stdlib_module_names
        if not name.startswith("_") and name not in EXCLUDED_MODULES
    )


def _stdlib_dir() -> str:
    return os.path.dirname(os.path.abspath(os.__file__))


def _is_stdlib(module: types.ModuleType) -> bool:
    """True for built-in and frozen modules and files of this Python's own Lib directory."""
    origin = getattr(module.__spec__, "origin", None)
    if origin in ("built-in", "frozen"):
        return True
    if not origin:
        return False
    path = os.path.abspath(origin)
    parts = path.split(os.sep)
    return path.startswith(_stdlib_dir() + os.sep) and not (
        "site-packages" in parts or "dist-packages" in parts
    )


def _import_quietly(name: str) -> types.ModuleType | None:
    """The module, or None where its import fails; whatever it prints is swallowed."""
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            module = importlib.import_module(name)
        except Exception:  # Any failure (missing platform module, broken C library) skips it.
            return None
    return module if _is_stdlib(module) else None


def _own_doc(obj: object) -> str | None:
    """The object's own docstring, not one inherited from a base class as `inspect.getdoc` does."""
    doc = getattr(obj, "__doc__", None)
    return doc if isinstance(doc, str) else None


def _is_documented_member(obj: object, module_name: str) -> bool:
    """Classes and functions defined by the module or by its private (often C) implementation."""
    if not (inspect.isclass(obj) or inspect.isroutine(obj)):
        return False
    owner = getattr(obj, "__module__", None)
    return isinstance(owner, str) and (owner == module_name or owner.startswith("_"))


def _is_method(obj: object) -> bool:
    return inspect.isroutine(obj) or isinstance(obj, (classmethod, staticmethod, property))


def _docstrings(module: types.ModuleType) -> list[str]:
    """Module docstring, then each public class (with its own public methods) or function."""
    docs = [inspect.getdoc(module)]
    members = vars(module)
    for name in sorted(members):
        obj = members[name]
        if name.startswith("_") or not _is_documented_member(obj, module.__name__):
            continue
        docs.append(_own_doc(obj))
        if inspect.isclass(obj):
            attributes = vars(obj)
            docs.extend(
                _own_doc(attributes[attr])
                for attr in sorted(attributes)
                if not attr.startswith("_") and _is_method(attributes[attr])
            )
    return [doc for doc in docs if doc]


def _is_code_like(line: str) -> bool:
    """Signatures, tables, rules and code: lines that are not mostly words."""
    stripped = line.strip()
    letters = sum(c.isalpha() for c in stripped)
    visible = sum(not c.isspace() for c in stripped)
    return (
        letters < 0.6 * visible
        or bool(_SIGNATURE.match(stripped))
        or bool(_CODE_OR_TABLE.search(stripped))
    )


def clean_docstring(doc: str) -> list[str]:
    """The prose paragraphs of a docstring, each joined into one line.

    Doctests (`>>>` and `...` lines with the output that follows them up to a blank line),
    indented blocks (code examples, literal blocks, argument tables) and lines that are mostly not
    letters are dropped. Each item of a bulleted list is a paragraph of its own.
    """
    paragraphs: list[str] = []
    current: list[str] = []
    in_doctest = False

    def flush() -> None:
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    for line in inspect.cleandoc(doc).splitlines():
        stripped = line.strip()
        if not stripped:
            in_doctest = False
            flush()
        elif stripped.startswith(_DOCTEST):
            in_doctest = True
            flush()
        elif in_doctest or line[0].isspace() or _is_code_like(stripped):
            flush()
        elif _BULLET.match(stripped):  # Each list item is a paragraph of its own.
            flush()
            current.append(_BULLET.sub("", stripped))
        else:
            current.append(stripped)
    flush()
    return [_plain_text(paragraph) for paragraph in paragraphs]


def _plain_text(text: str) -> str:
    """Drops reStructuredText markup (`:func:`x``, ``x``, "Example::") and collapses whitespace."""
    text = _REST_ROLE.sub(r"\1", text).replace("``", "")
    text = " ".join(text.split())
    return text[:-1] if text.endswith("::") else text


def module_document(name: str) -> list[str]:
    """The sentences (of at least 3 words) of one module's docstrings; [] if it cannot import."""
    # Deprecated modules (and members such as typing.io) warn on import or attribute access.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = _import_quietly(name)
        docs = _docstrings(module) if module is not None else []
    sentences = []
    seen = set()
    for doc in docs:
        if doc in seen:  # Aliases (`str.__doc__` under two names) are read once.
            continue
        seen.add(doc)
        for paragraph in clean_docstring(doc):
            sentences.extend(s for s in split_sentences(paragraph) if len(s.split()) >= 3)
    return sentences


def build_corpus(max_documents: int = 0, min_sentences: int = 2) -> list[list[str]]:
    """One document per module in `module_names()` order; `max_documents` 0 means all."""
    documents = []
    for name in module_names():
        document = module_document(name)
        if len(document) >= min_sentences:
            documents.append(document)
            if len(documents) == max_documents:
                break
    return documents


def corpus_text(documents: list[list[str]]) -> str:
    """create_pretraining_data.py's input: a sentence per line, a blank line between documents."""
    return "\n\n".join("\n".join(document) for document in documents) + "\n"


def stdlib_corpus(options: StdlibCorpusOptions) -> None:
    check_options(options)
    documents = build_corpus(options.max_documents, options.min_sentences)
    atomic_write_text(options.output_file, corpus_text(documents))
    sentences = [sentence for document in documents for sentence in document]
    words = sum(len(sentence.split()) for sentence in sentences)
    logging.info(
        "Wrote %d documents, %d sentences, %d words to %s",
        len(documents),
        len(sentences),
        words,
        options.output_file,
    )


if __name__ == "__main__":
    cli.define_flags(StdlibCorpusOptions)
    cli.run_with_options(StdlibCorpusOptions, stdlib_corpus)
