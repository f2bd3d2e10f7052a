"""The tag schemes of CoNLL-2003 NER data: IOB1 and IOB2.

Every word is tagged "O" (outside an entity) or "B-TYPE"/"I-TYPE" (in an entity of TYPE, e.g.
PER, LOC, ORG, MISC). The two schemes differ only in where B- appears:

- IOB1 (the files as the shared task distributed them): I- on every word of an entity; B- only
  on the first word of an entity that directly follows another entity of the same type.
- IOB2 (most later copies, e.g. the Hugging Face one): B- on the first word of every entity.

Both describe the same entities, and conlleval reads both the same way (an I- that does not
continue an entity of its type starts one), so scores do not depend on the scheme. Only these
IOB tags are accepted here: conlleval's E- rules are for the IOE schemes, and it has no rule for
S-, so IOBES tags would not be scored as IOBES (see bert_tf.ner.conlleval).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bert_tf.errors import InputError
from bert_tf.ner.conlleval import OUTSIDE, chunk_ends, chunk_starts

IOB1 = "IOB1"
IOB2 = "IOB2"


def split_tag(tag: str) -> tuple[str, str]:
    """Splits an IOB tag into (prefix, type); raises InputError for anything else.

    >>> split_tag("B-PER"), split_tag("I-MISC"), split_tag("O")
    (('B', 'PER'), ('I', 'MISC'), ('O', ''))
    """
    if tag == "O":
        return OUTSIDE
    prefix, hyphen, chunk_type = tag.partition("-")
    if prefix in ("B", "I") and hyphen and chunk_type:
        return prefix, chunk_type
    raise InputError(
        f"Malformed NER tag {tag!r}: expected 'O' or 'B-TYPE'/'I-TYPE' (IOB1 or IOB2 tags)."
    )


def iob1_to_iob2(tags: Sequence[str]) -> list[str]:
    """Retags one sentence so that every entity starts with B-.

    >>> iob1_to_iob2(["I-PER", "I-PER", "O", "I-LOC", "B-LOC"])
    ['B-PER', 'I-PER', 'O', 'B-LOC', 'B-LOC']
    """
    converted, previous_type = [], ""
    for tag in tags:
        prefix, chunk_type = split_tag(tag)
        # An I- that does not continue an entity of its type (after O, at the sentence start or
        # after another type) starts an entity.
        starts = prefix == "I" and chunk_type != previous_type
        converted.append(f"B-{chunk_type}" if starts else tag)
        previous_type = chunk_type
    return converted


def iob2_to_iob1(tags: Sequence[str]) -> list[str]:
    """Retags one sentence so that B- remains only where an entity follows one of its type.

    >>> iob2_to_iob1(["B-PER", "I-PER", "B-PER", "O", "B-LOC"])
    ['I-PER', 'I-PER', 'B-PER', 'O', 'I-LOC']
    """
    converted, previous_type = [], ""
    for tag in tags:
        prefix, chunk_type = split_tag(tag)
        touches = chunk_type == previous_type  # the previous word is in an entity of this type
        converted.append(f"I-{chunk_type}" if prefix == "B" and not touches else tag)
        previous_type = chunk_type
    return converted


def detect_scheme(sentences: Iterable[Sequence[str]]) -> str:
    """Returns "IOB2" if every entity starts with B-, else "IOB1".

    Data without entities, or whose entities all start with B-, counts as IOB2: converting it to
    IOB2 changes nothing.
    """
    for tags in sentences:
        if iob1_to_iob2(tags) != list(tags):
            return IOB1
    return IOB2


def chunks(tags: Sequence[str]) -> list[tuple[str, int, int]]:
    """The entities of one sentence as (type, first index, last index), by conlleval's rules.

    >>> chunks(["B-PER", "I-PER", "O", "I-LOC", "I-ORG"])
    [('PER', 0, 1), ('LOC', 3, 3), ('ORG', 4, 4)]
    """
    found, start, previous = [], None, OUTSIDE
    # The end of the sentence is read as an O: it closes the last entity.
    for index, current in enumerate([*map(split_tag, tags), OUTSIDE]):
        if start is not None and chunk_ends(previous, current):
            found.append((previous[1], start, index - 1))
            start = None
        if chunk_starts(previous, current):
            start = index
        previous = current
    return found
