"""Raw text into the original's input format: bert_tf/pretraining/corpus.py and
prepare_corpus.py (Project Gutenberg books and Wikipedia-style paragraphs)."""

from __future__ import annotations

import gzip
from pathlib import Path

from conftest import error_line, run_script

from bert_tf.pretraining.corpus import (
    book_document,
    book_paragraphs,
    corpus_text,
    paragraph_documents,
    split_sentences,
    strip_gutenberg_licence,
)

BOOK = """\
The Project Gutenberg EBook of A Test, by Some One

This eBook is for the use of anyone anywhere at no cost.

Title: A Test

*** START OF THIS PROJECT GUTENBERG EBOOK A TEST ***




Produced by Some Volunteers and the Online Distributed
Proofreading Team at http://www.pgdp.net


                              A TEST

                            CHAPTER I.

It was a dark night. The wind blew
hard over the _moor_, and Mr. Holmes
said nothing.

[Illustration: A dark moor.]

"Who is there?" asked Dr. Watson. Nobody
answered.

*** END OF THIS PROJECT GUTENBERG EBOOK A TEST ***

Licence text that is not the book.
"""


def test_splits_sentences_at_their_ends_and_lines():
    text = 'He left. "Why?" she asked! It cost 3.5 dollars.\nNew paragraph 2 here'
    assert split_sentences(text) == [
        "He left.",
        '"Why?" she asked!',
        "It cost 3.5 dollars.",
        "New paragraph 2 here",
    ]


def test_abbreviations_and_initials_do_not_end_a_sentence():
    text = "Mr. Smith met Dr. Watson in St. Louis. J. R. R. Tolkien lived in the U.K. Then he left."
    assert split_sentences(text) == [
        "Mr. Smith met Dr. Watson in St. Louis.",
        "J. R. R. Tolkien lived in the U.K. Then he left.",
    ]
    assert split_sentences("Use a mapping (e.g. A dict). Or not.") == [
        "Use a mapping (e.g. A dict).",
        "Or not.",
    ]


def test_quotations_stay_whole_and_a_quote_may_start_the_next_sentence():
    text = "\u201cHalloa!\u201d he cried. \u201cBelow!\u201d Nothing came. 'Why?' she asked."
    assert split_sentences(text) == [
        "\u201cHalloa!\u201d he cried.",
        "\u201cBelow!\u201d",
        "Nothing came.",
        "'Why?' she asked.",
    ]


def test_lower_case_after_a_period_does_not_start_a_sentence():
    assert split_sentences("Call obj.close() when done. os.path is a module.") == [
        "Call obj.close() when done. os.path is a module."
    ]


def test_gutenberg_header_and_footer_are_cut_off():
    text = strip_gutenberg_licence(BOOK)
    assert "This eBook is for the use" not in text
    assert "Licence text" not in text
    assert "It was a dark night." in text


def test_old_gutenberg_files_end_their_header_with_the_small_print():
    old = (
        "Project Gutenberg Etext of Old\n\nLegal words.\n"
        "*END*THE SMALL PRINT! FOR PUBLIC DOMAIN ETEXTS*Ver.04.29.93*END*\n\n"
        "The story begins here.\n\nEnd of Project Gutenberg Etext of Old\n"
    )
    assert strip_gutenberg_licence(old).strip() == "The story begins here."


def test_a_start_line_wrapped_over_two_lines_is_cut_whole():
    text = "*** START OF THIS PROJECT GUTENBERG EBOOK LIFE ON THE\nMISSISSIPPI ***\n\nText."
    assert strip_gutenberg_licence(text).strip() == "Text."


def test_text_without_gutenberg_markers_is_kept_whole():
    assert strip_gutenberg_licence("Just a text.\n") == "Just a text.\n"


def test_book_paragraphs_join_wrapped_lines_and_drop_what_is_not_prose():
    assert book_paragraphs(BOOK) == [
        "It was a dark night. The wind blew hard over the moor, and Mr. Holmes said nothing.",
        '"Who is there?" asked Dr. Watson. Nobody answered.',
    ]


def test_a_book_is_one_document_of_sentences():
    assert book_document(BOOK) == [
        "It was a dark night.",
        "The wind blew hard over the moor, and Mr. Holmes said nothing.",
        '"Who is there?" asked Dr. Watson.',
        "Nobody answered.",
    ]


def test_paragraph_documents_split_at_blank_lines_and_wikiextractor_docs():
    lines = [
        '<doc id="1" url="x" title="Anarchism">',
        "Anarchism",
        "Anarchism is a philosophy. It has many schools.",
        "It began long ago.",
        "</doc>",
        '<doc id="2" url="y" title="Autism">',
        "Autism",
        "Autism is a condition.",
        "</doc>",
        "First paragraph of a plain article.",
        "",
        "Second article.",
    ]
    assert list(paragraph_documents(lines)) == [
        ["Anarchism is a philosophy.", "It has many schools.", "It began long ago."],
        ["Autism is a condition."],
        ["First paragraph of a plain article."],
        ["Second article."],
    ]


def test_corpus_text_is_a_sentence_per_line_and_a_blank_line_per_document():
    assert "".join(corpus_text([["A b.", "C d."], [], ["E."]])) == "A b.\nC d.\n\nE.\n\n"


def _book(title: str, sentences: int) -> str:
    body = "\n\n".join(f"The {title} sentence number {i} is here." for i in range(sentences))
    return (
        f"Header of {title}.\n*** START OF THIS PROJECT GUTENBERG EBOOK {title.upper()} ***\n\n"
        f"{body}\n\n*** END OF THIS PROJECT GUTENBERG EBOOK {title.upper()} ***\nFooter.\n"
    )


def test_prepare_corpus_reads_gzipped_books_drops_repeats_and_holds_some_out(tmp_path: Path):
    books = tmp_path / "books"
    books.mkdir()
    for i, title in enumerate(["alpha", "beta", "gamma", "delta", "alpha"]):
        data = _book(title, 3).encode()
        if i % 2:
            (books / f"{i}.txt").write_bytes(data)
        else:
            (books / f"{i}.txt.gz").write_bytes(gzip.compress(data))
    result = run_script(
        "prepare_corpus.py",
        f"--input_file={books}/*.txt,{books}/*.txt.gz",
        f"--output_file={tmp_path / 'train.txt'}",
        f"--heldout_file={tmp_path / 'heldout.txt'}",
        "--num_heldout_documents=1",
        fresh=True,
    )
    assert result.returncode == 0, result.stderr
    assert "a document repeats an earlier one; dropped" in result.stderr
    train = (tmp_path / "train.txt").read_text().split("\n\n")[:-1]
    heldout = (tmp_path / "heldout.txt").read_text().split("\n\n")[:-1]
    assert len(train) == 3 and len(heldout) == 1  # 4 distinct books
    assert not set(train) & set(heldout)
    assert heldout[0].splitlines()[0].endswith("sentence number 0 is here.")
    assert all(len(document.splitlines()) == 3 for document in train + heldout)
    assert "Header" not in (tmp_path / "train.txt").read_text()


def test_prepare_corpus_reads_wikipedia_style_paragraphs(tmp_path: Path):
    source = tmp_path / "wiki_00"
    source.write_text('<doc id="1" title="T">\nT\nOne. Two.\n</doc>\n<doc id="2" title="U">\nU\n')
    result = run_script(
        "prepare_corpus.py",
        f"--input_file={source}",
        "--input_format=paragraphs",
        f"--output_file={tmp_path / 'out.txt'}",
        "--min_sentences=1",
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.txt").read_text() == "One.\nTwo.\n\n"


def test_prepare_corpus_without_any_document_is_one_error_line(tmp_path: Path):
    (tmp_path / "empty.txt").write_text("ONLY A TITLE\n")
    result = run_script(
        "prepare_corpus.py",
        f"--input_file={tmp_path / 'empty.txt'}",
        f"--output_file={tmp_path / 'out.txt'}",
    )
    assert "0 documents of at least 2 sentences" in error_line(result, "prepare_corpus.py")
    assert not (tmp_path / "out.txt").exists()


def test_prepare_corpus_names_a_broken_gzip_file(tmp_path: Path):
    (tmp_path / "broken.txt.gz").write_bytes(gzip.compress(b"Some text. More text.\n")[:-6])
    result = run_script(
        "prepare_corpus.py",
        f"--input_file={tmp_path / 'broken.txt.gz'}",
        f"--output_file={tmp_path / 'out.txt'}",
    )
    last = error_line(result, "prepare_corpus.py")
    assert "broken.txt.gz is not a whole gzip file" in last


def test_prepare_corpus_needs_a_heldout_file_with_a_heldout_count(tmp_path: Path):
    (tmp_path / "a.txt").write_text("One. Two.\n")
    result = run_script(
        "prepare_corpus.py",
        f"--input_file={tmp_path / 'a.txt'}",
        f"--output_file={tmp_path / 'out.txt'}",
        "--num_heldout_documents=1",
    )
    assert "--num_heldout_documents=1 --heldout_file=None" in error_line(
        result, "prepare_corpus.py"
    )
