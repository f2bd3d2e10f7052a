"""Entity-level scores exactly as CoNLL's `conlleval.pl` computes and prints them.

The CoNLL-2000 and CoNLL-2003 shared tasks scored systems with `conlleval.pl` (version 2004-01-26,
Erik Tjong Kim Sang), and the NER F1 of BERT's Table 7 is that script's FB1. This is our own
reading of the script's behaviour, checked byte for byte against its output on the inputs in
tests/fixtures/conlleval/. A chunk (entity) counts as correct only when its first word, last word
and type all agree with a gold chunk.

What the script does that a reader may not expect, and that we keep because the numbers must be
its numbers:

- A line is split at every single space (not at runs of whitespace, not at tabs); trailing empty
  fields are dropped, leading ones are kept. The last field is the guessed tag, the one before it
  the gold tag. Only "\\n" is removed from a line's end, so a "\\r" stays part of the last tag.
- An empty line, or a line whose first field is "-X-", is a sentence boundary. A "-DOCSTART-"
  line is an ordinary word: it is counted as a token and its tags are scored.
- A tag splits at its first hyphen ("B-PER" -> "B", "PER"); a tag without a hyphen has no type.
  A type "0" counts as no type (the script tests types for Perl truth).
- Besides B/I/O the chunk rules know E (IOE1/IOE2, which have no B) and the bracket tags "[",
  "]" and "."; an S- tag is just a typed tag, so IOBES input is not scored as IOBES.
- The typeless type is listed twice in the report when both gold and guessed tags have it.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

from bert_tf.errors import InputError

Tag = tuple[str, str]  # (prefix, type): "B-PER" -> ("B", "PER"), "O" -> ("O", "")

OUTSIDE: Tag = ("O", "")
BOUNDARY = "-X-"  # conlleval's boundary word; such a line is read as a blank line

# Adjacent (previous, current) prefixes that end or start a chunk whatever the types. E marks a
# chunk's last word in the IOE representations (Tjong Kim Sang and Veenstra, EACL 1999).
_ENDS = {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"), ("E", "E"), ("E", "I"), ("E", "O")}
_STARTS = {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"), ("E", "E"), ("E", "I"), ("O", "E")}
# "[" and "]" tag one-word chunks; the type of an "O" or "." word neither starts nor ends one.
_BRACKETS = ("[", "]")
_NO_TYPE_CHANGE = ("O", ".")


def parse_tag(tag: str) -> Tag:
    """Splits a tag as conlleval does; any string is accepted.

    >>> parse_tag("B-MISC"), parse_tag("O"), parse_tag("I-NP-X")
    (('B', 'MISC'), ('O', ''), ('I', 'NP-X'))
    """
    prefix, _, chunk_type = tag.partition("-")
    return prefix, "" if chunk_type == "0" else chunk_type


def chunk_ends(previous: Tag, current: Tag) -> bool:
    """Whether a chunk ends between two adjacent words (as conlleval's `endOfChunk`)."""
    (prefix, chunk_type), (next_prefix, next_type) = previous, current
    return (
        (prefix, next_prefix) in _ENDS
        or (prefix not in _NO_TYPE_CHANGE and chunk_type != next_type)
        or prefix in _BRACKETS
    )


def chunk_starts(previous: Tag, current: Tag) -> bool:
    """Whether a chunk starts between two adjacent words (as conlleval's `startOfChunk`).

    An I- after O or after another type starts a chunk: IOB1 and IOB2 are read alike.
    """
    (prefix, chunk_type), (next_prefix, next_type) = previous, current
    return (
        (prefix, next_prefix) in _STARTS
        or (next_prefix not in _NO_TYPE_CHANGE and chunk_type != next_type)
        or next_prefix in _BRACKETS
    )


@dataclasses.dataclass(frozen=True)
class ChunkScore:
    """Chunk counts, of one type or of all, and conlleval's percentages of them."""

    correct_chunks: int  # guessed chunks whose extent and type equal a gold chunk's
    found_correct: int  # chunks in the gold tags
    found_guessed: int  # chunks in the guessed tags

    @property
    def precision(self) -> float:
        """100 * correct / guessed; 0 when nothing was guessed."""
        return 100 * self.correct_chunks / self.found_guessed if self.found_guessed else 0.0

    @property
    def recall(self) -> float:
        """100 * correct / gold; 0 when the gold has no chunk."""
        return 100 * self.correct_chunks / self.found_correct if self.found_correct else 0.0

    @property
    def fb1(self) -> float:
        """The harmonic mean of precision and recall; 0 when both are 0."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0


@dataclasses.dataclass(frozen=True)
class ConllevalResult:
    """What conlleval counts: words, correct tags, and chunks overall and per type."""

    token_count: int  # words; boundaries are not counted
    correct_tags: int  # words whose guessed tag equals the gold tag
    overall: ChunkScore
    by_type: dict[str, ChunkScore]  # every type of a gold or guessed chunk, in byte order

    @property
    def accuracy(self) -> float:
        """Token accuracy in percent; 0 without tokens (conlleval then prints no such line)."""
        return 100 * self.correct_tags / self.token_count if self.token_count else 0.0


def evaluate(sentences: Iterable[tuple[Sequence[str], Sequence[str]]]) -> ConllevalResult:
    """Scores (gold tags, guessed tags) sentence pairs.

    The same as `evaluate_lines` on a file with one "word gold guessed" line per word and a blank
    line after every sentence.
    """
    return _score(_sentence_words(sentences))


def evaluate_lines(lines: Iterable[str], delimiter: str = " ") -> ConllevalResult:
    """Scores conlleval's input format: per word a line whose last two fields are the gold and
    the guessed tag, sentences separated by blank lines.

    `delimiter` is a literal string (conlleval's -d reads it as a regular expression, which is
    the same for a space or a tab). Raises InputError for a line whose number of fields differs
    from the first non-blank line's, or a word line with fewer than two fields.
    """
    if not delimiter:
        raise InputError("conlleval: the delimiter must not be empty.")
    return _score(_file_words(lines, delimiter))


def _sentence_words(
    sentences: Iterable[tuple[Sequence[str], Sequence[str]]],
) -> Iterator[tuple[Tag, Tag] | None]:
    """Yields (gold, guessed) per word and None after every sentence."""
    for index, (gold, guessed) in enumerate(sentences):
        if len(gold) != len(guessed):
            raise InputError(
                f"conlleval: sentence {index} has {len(gold)} gold tags but {len(guessed)} "
                "guessed tags; expected one of each per word."
            )
        yield from ((parse_tag(g), parse_tag(p)) for g, p in zip(gold, guessed, strict=True))
        yield None


def _file_words(lines: Iterable[str], delimiter: str) -> Iterator[tuple[Tag, Tag] | None]:
    """Yields (gold, guessed) per word line and None per boundary line."""
    expected = None  # the field count of the first non-blank line
    for number, line in enumerate(lines, start=1):
        fields = line.removesuffix("\n").split(delimiter)
        while fields and not fields[-1]:  # as Perl's split
            fields.pop()
        if not fields:
            yield None
            continue
        expected = expected or len(fields)
        if len(fields) != expected:
            raise InputError(
                f"conlleval: line {number} has {len(fields)} fields, expected {expected} as on "
                f"the first line: {line.rstrip()!r}"
            )
        if fields[0] == BOUNDARY:
            yield None
        elif len(fields) < 2:
            raise InputError(
                f"conlleval: line {number} has 1 field, expected at least the gold and the "
                f"guessed tag: {line.rstrip()!r}"
            )
        else:
            yield parse_tag(fields[-2]), parse_tag(fields[-1])


def _score(words: Iterable[tuple[Tag, Tag] | None]) -> ConllevalResult:
    """conlleval's one pass over the words; None is a boundary, read as a non-word tagged O O."""
    correct_chunks, found_correct, found_guessed = Counter(), Counter(), Counter()
    token_count = correct_tags = 0
    last_gold = last_guessed = OUTSIDE
    matching = False  # the gold chunk being read has been guessed exactly so far
    for word in words:
        gold, guessed = word or (OUTSIDE, OUTSIDE)
        gold_ends, guessed_ends = chunk_ends(last_gold, gold), chunk_ends(last_guessed, guessed)
        gold_starts = chunk_starts(last_gold, gold)
        guessed_starts = chunk_starts(last_guessed, guessed)
        if matching:
            if gold_ends and guessed_ends and last_gold[1] == last_guessed[1]:
                correct_chunks[last_gold[1]] += 1
                matching = False
            elif gold_ends != guessed_ends or gold[1] != guessed[1]:
                matching = False
        if gold_starts and guessed_starts and gold[1] == guessed[1]:
            matching = True
        if gold_starts:
            found_correct[gold[1]] += 1
        if guessed_starts:
            found_guessed[guessed[1]] += 1
        if word:
            token_count += 1
            correct_tags += gold == guessed
        last_gold, last_guessed = gold, guessed
    if matching:  # the input ended inside a correct chunk
        correct_chunks[last_gold[1]] += 1

    overall = ChunkScore(
        sum(correct_chunks.values()), sum(found_correct.values()), sum(found_guessed.values())
    )
    # Per type only the types that begin a chunk; a correct chunk of another type (possible with
    # "." tags) still counts overall, as in conlleval.
    types = sorted(found_correct.keys() | found_guessed.keys())
    by_type = {t: ChunkScore(correct_chunks[t], found_correct[t], found_guessed[t]) for t in types}
    return ConllevalResult(token_count, correct_tags, overall, by_type)


def report(result: ConllevalResult) -> str:
    """The text conlleval.pl prints (without -l or -r), byte for byte once UTF-8 encoded."""
    overall = result.overall
    lines = [
        f"processed {result.token_count} tokens with {overall.found_correct} phrases; "
        f"found: {overall.found_guessed} phrases; correct: {overall.correct_chunks}.\n"
    ]
    if result.token_count:
        lines.append(f"accuracy: {result.accuracy:6.2f}%; {_percentages(overall)}\n")
    for name, score in result.by_type.items():
        # conlleval pads to 17 bytes, not characters, and removes duplicate type names with a
        # Perl truth test that lets the empty name through twice.
        padding = " " * (17 - len(name.encode()))
        repeat = 2 if not name and score.found_correct and score.found_guessed else 1
        lines += [f"{padding}{name}: {_percentages(score)}  {score.found_guessed}\n"] * repeat
    return "".join(lines)


def _percentages(score: ChunkScore) -> str:
    return (
        f"precision: {score.precision:6.2f}%; recall: {score.recall:6.2f}%; FB1: {score.fb1:6.2f}"
    )


def metrics(result: ConllevalResult) -> dict[str, float]:
    """Overall and per-type percentages for an eval_results file, e.g. `f1` and `PER_f1`."""
    values = {
        "precision": result.overall.precision,
        "recall": result.overall.recall,
        "f1": result.overall.fb1,
        "accuracy": result.accuracy,
    }
    for name, score in result.by_type.items():
        values.update(
            {
                f"{name}_precision": score.precision,
                f"{name}_recall": score.recall,
                f"{name}_f1": score.fb1,
            }
        )
    return values
