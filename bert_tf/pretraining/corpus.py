"""Raw text into the original's pre-training input format: one sentence per line, a blank line
between documents (paper Sec. 3.1: "a document-level corpus rather than a shuffled
sentence-level corpus").

Two kinds of raw text:
- books, as Project Gutenberg distributes them (our stand-in for BooksCorpus): the licence
  header and footer are cut off, hard-wrapped paragraphs are joined, and headings, illustration
  captions and transcriber's notes are dropped; one book is one document;
- paragraphs, as Wikipedia dumps are extracted (WikiExtractor's `<doc ...>` ... `</doc>`, or
  one paragraph per line with a blank line between documents); the title line after `<doc>`
  is dropped, as the paper keeps "text passages" only.

    documents = book_document(open("pg1342.txt").read())  # [sentence, ...]
    write_corpus(documents, "corpus/books.txt")
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

# A sentence splitter of our own: tensorflow-text's StateBasedSentenceBreaker splits after
# "Mr." and inside quotations ('He said "Hello!' | '" and left'), which NSP segments should not.
#
# A sentence ends at . ! ? (and closing quotes or brackets) followed by whitespace and a
# capital, a digit or an opening quote/bracket, unless the word before the period is a known
# abbreviation or an initial ("J.", "U.S.").
_SENTENCE_END = re.compile(
    r"[.!?][\"'\u201d\u2019)\]]*\s+(?=[\"'\u201c\u2018(\[_]*[A-Z0-9\u00c0-\u00de])"
)
ABBREVIATIONS = frozenset(
    "mr mrs ms dr st mt jr sr prof rev hon capt col gen lt sgt gov esq messrs mme mlle "
    "vs etc cf no vol ch fig e.g i.e eg ie viz".split()
)
# A single letter ("J.", "a.") or a run of capital initials ("U.S.", "J.R.R.").
_INITIALS = re.compile(r"[A-Za-z]\.|(?:[A-Z]\.)+")


def split_sentences(text: str) -> list[str]:
    """The sentences of one paragraph (or of each line of `text`), stripped, empties dropped.

    Example:
        >>> split_sentences('Mr. Smith left. "Why?" she asked. J. S. Bach wrote it.')
        ['Mr. Smith left.', '"Why?" she asked.', 'J. S. Bach wrote it.']
    """
    sentences = []
    for line in text.split("\n"):
        start = 0
        for match in _SENTENCE_END.finditer(line):
            if line[match.start()] == "." and _is_abbreviation(line[start : match.start() + 1]):
                continue
            sentences.append(line[start : match.end()].strip())
            start = match.end()
        sentences.append(line[start:].strip())
    return [sentence for sentence in sentences if sentence]


def _is_abbreviation(text: str) -> bool:
    """Whether the last word of `text` (which ends in a period) abbreviates rather than ends."""
    words = text.split()
    word = words[-1].lstrip("\"'(\u201c\u2018[_") if words else ""
    return word[:-1].lower() in ABBREVIATIONS or bool(_INITIALS.fullmatch(word))


# Project Gutenberg's licence header ends at its START line (or, in old files, at the end of
# the "Small Print"); its footer begins at an END line or "End of (the) Project Gutenberg ...".
_GUTENBERG_START = re.compile(
    r"^\W*(\*\*\*\s*START OF (THE|THIS) PROJECT GUTENBERG[^\n]*(\n[^\n]*?\*\*\*)?"
    r"|\*END\*THE SMALL PRINT[^\n]*)$",
    re.IGNORECASE | re.MULTILINE,
)
_GUTENBERG_END = re.compile(
    r"^\W*(\*\*\*\s*END OF (THE|THIS) PROJECT GUTENBERG"
    r"|END OF (THE )?PROJECT GUTENBERG"
    r"|(THE )?PROJECT GUTENBERG('S)? E-?TEXT OF)",
    re.IGNORECASE | re.MULTILINE,
)
# Paragraphs that are not the book's prose: producers' credits, notes about the e-text, links.
_NOT_PROSE = re.compile(
    r"^\W*(produced by|e-?text prepared by|this e-?(text|book) was|transcriber'?s? note)"
    r"|gutenberg|https?://|www\.",
    re.IGNORECASE,
)
# Illustration captions and footnote anchors: "[Illustration: ...]", "[Footnote 3: ...]".
_BRACKETED_NOTE = re.compile(r"\[(Illustration|Frontispiece|Footnote|Sidenote)[^\]]*\]?", re.I)
# _italic_ markers (Gutenberg's plain-text emphasis), not underscores inside words.
_EMPHASIS = re.compile(r"(?<!\w)_+|_+(?!\w)")


def strip_gutenberg_licence(text: str) -> str:
    """The book between Project Gutenberg's header and footer (all of it if there are none)."""
    start = _GUTENBERG_START.search(text)
    if start:
        text = text[start.end() :]
    end = _GUTENBERG_END.search(text)
    if end:
        text = text[: end.start()]
    return text


def book_paragraphs(text: str) -> list[str]:
    """A Gutenberg book's prose paragraphs, each on one line.

    Paragraphs are separated by blank lines; their hard-wrapped lines are joined. Dropped:
    paragraphs without a lower-case letter (titles, "CHAPTER IV", tables of figures), credits
    and notes about the e-text, illustration captions.
    """
    text = strip_gutenberg_licence(text.replace("\r\n", "\n").replace("\r", "\n"))
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        paragraph = " ".join(_EMPHASIS.sub("", _BRACKETED_NOTE.sub(" ", block)).split())
        if not re.search(r"[a-z]", paragraph) or _NOT_PROSE.search(paragraph):
            continue
        paragraphs.append(paragraph)
    return paragraphs


def book_document(text: str) -> list[str]:
    """A Gutenberg book as one document: its sentences, in order."""
    return [sentence for p in book_paragraphs(text) for sentence in split_sentences(p)]


_DOC_START = re.compile(r"^<doc[ >]")


def paragraph_documents(lines: Iterable[str]) -> Iterator[list[str]]:
    """Documents of one-paragraph-per-line text: a blank line, or WikiExtractor's `<doc>` /
    `</doc>`, ends a document; the title line that follows `<doc ...>` is dropped."""
    document: list[str] = []
    skip_title = False
    for line in lines:
        line = line.strip()
        if _DOC_START.match(line) or line == "</doc>" or not line:
            if document:
                yield document
            document = []
            skip_title = bool(_DOC_START.match(line))
            continue
        if skip_title:
            skip_title = False
            continue
        document.extend(split_sentences(line))
    if document:
        yield document


def corpus_text(documents: Iterable[list[str]]) -> Iterator[str]:
    """The original's input format, a document at a time: its sentences one per line, then a
    blank line."""
    for document in documents:
        if document:
            yield "".join(sentence + "\n" for sentence in document) + "\n"
