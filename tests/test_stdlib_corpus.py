"""scripts/stdlib_corpus.py: a pre-training corpus from the standard library's docstrings.

Docstrings become prose (doctests, code and tables dropped, wrapped lines joined), prose becomes
sentences (abbreviations kept whole), modules become documents, and the file is
create_pretraining_data.py's input: a sentence per line, a blank line between documents, the same
bytes on every run.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

from conftest import REPO


def _load_script():
    """scripts/ is not a package: load the script as a module, once (its flags are global)."""
    if "stdlib_corpus" in sys.modules:
        return sys.modules["stdlib_corpus"]
    spec = importlib.util.spec_from_file_location(
        "stdlib_corpus", REPO / "scripts" / "stdlib_corpus.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["stdlib_corpus"] = module
    spec.loader.exec_module(module)
    return module


stdlib_corpus = _load_script()

# Measured with Python 3.11.7 on Linux: 190 documents, 9,567 sentences, 116,738 words (716 kB)
# in about 0.4 s. The bounds sit about 20% below, for other platforms and patch releases.
MIN_FULL_DOCUMENTS = 150
MIN_FULL_WORDS = 93_000


def test_doctest_lines_and_their_output_are_dropped():
    doc = """Add two numbers.

    >>> add(1, 2)
    3
    >>> for i in range(2):
    ...     print(i)
    0
    1

    The result is an int.
    """
    assert stdlib_corpus.clean_docstring(doc) == ["Add two numbers.", "The result is an int."]


def test_wrapped_lines_are_joined_and_code_and_tables_dropped():
    doc = """Open a file
    and return a stream.

    Example::

        with open(path) as f:
            data = f.read()

    open(file, mode='r') -> stream
    ===== ==========
    'r'   read mode
    ===== ==========
    The :func:`open` function uses ``mode``.
    """
    assert stdlib_corpus.clean_docstring(doc) == [
        "Open a file and return a stream.",
        "Example:",
        "The open function uses mode.",
    ]


def test_bulleted_items_are_paragraphs_of_their_own():
    doc = """The tuple holds:
    - the file type and
    - the sampling rate.
    """
    assert stdlib_corpus.clean_docstring(doc) == [
        "The tuple holds:",
        "the file type and",
        "the sampling rate.",
    ]


def test_a_document_is_the_module_docstring_then_its_members():
    document = stdlib_corpus.module_document("abc")
    assert document[0] == "Abstract Base Classes (ABCs) according to PEP 3119."
    assert "Metaclass for defining Abstract Base Classes (ABCs)." in document
    assert all(len(sentence.split()) >= 3 for sentence in document)


def test_private_test_and_side_effect_modules_are_not_read():
    names = stdlib_corpus.module_names()
    assert names == sorted(names)
    assert "os" in names and "json" in names
    assert not any(name.startswith("_") for name in names)
    for name in ("antigravity", "this", "idlelib", "tkinter", "turtle", "test", "venv"):
        assert name not in names


def test_modules_that_do_not_import_give_no_document():
    assert stdlib_corpus.module_document("no_such_module_anywhere") == []


def test_two_builds_are_equal():
    first = stdlib_corpus.build_corpus(max_documents=20)
    second = stdlib_corpus.build_corpus(max_documents=20)
    assert len(first) == 20
    assert first == second


def test_format_is_a_sentence_per_line_and_a_blank_line_between_documents():
    documents = stdlib_corpus.build_corpus(max_documents=20, min_sentences=2)
    text = stdlib_corpus.corpus_text(documents)
    blocks = text[:-1].split("\n\n")
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert [block.split("\n") for block in blocks] == documents
    for document in documents:
        assert len(document) >= 2
        for sentence in document:
            assert sentence and sentence == sentence.strip() and "\n" not in sentence


def test_command_line_writes_the_whole_standard_library(tmp_path):
    output_file = tmp_path / "corpus" / "stdlib.txt"
    result = subprocess.run(
        [sys.executable, "scripts/stdlib_corpus.py", f"--output_file={output_file}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    documents = output_file.read_text(encoding="utf-8").rstrip("\n").split("\n\n")
    words = sum(len(document.split()) for document in documents)
    assert len(documents) >= MIN_FULL_DOCUMENTS
    assert words >= MIN_FULL_WORDS
    assert f"{len(documents)} documents" in result.stderr
    assert f"{words} words" in result.stderr
    assert os.listdir(output_file.parent) == ["stdlib.txt"]  # No temporary file left behind.


def test_bad_flag_is_one_line_error_and_no_output(tmp_path):
    output_file = tmp_path / "stdlib.txt"
    result = subprocess.run(
        [
            sys.executable,
            "scripts/stdlib_corpus.py",
            f"--output_file={output_file}",
            "--max_documents=-1",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "stdlib_corpus.py: error: --max_documents=-1; expected >= 0" in result.stderr
    assert not output_file.exists()
