"""bert_tf.ner.tagging: IOB1 and IOB2, and the entities conlleval reads from them."""

from __future__ import annotations

import pytest
from fixtures.conlleval.make_fixtures import CONLL2003_VALID, conll2003_sentences

from bert_tf.errors import InputError
from bert_tf.ner.conlleval import evaluate
from bert_tf.ner.tagging import (
    IOB1,
    IOB2,
    chunks,
    detect_scheme,
    iob1_to_iob2,
    iob2_to_iob1,
    split_tag,
)


@pytest.fixture(scope="module")
def valid_tags() -> list[list[str]]:
    """The NER tags (IOB2) of every sentence of CoNLL-2003's valid.txt."""
    if not CONLL2003_VALID.is_file():
        pytest.skip("../shared/data/conll2003/valid.txt is absent")
    return [[row[-1] for row in rows] for rows in conll2003_sentences(CONLL2003_VALID)]


def test_split_tag_gives_prefix_and_type():
    assert split_tag("B-PER") == ("B", "PER")
    assert split_tag("I-MISC") == ("I", "MISC")
    assert split_tag("O") == ("O", "")


@pytest.mark.parametrize("tag", ["", "B", "B-", "PER", "E-PER", "S-LOC", "o", "O-PER", "[CLS]"])
def test_split_tag_rejects_what_is_not_iob(tag):
    with pytest.raises(InputError, match=r"expected 'O' or 'B-TYPE'/'I-TYPE'") as error:
        split_tag(tag)
    assert repr(tag) in str(error.value)


def test_iob1_to_iob2_starts_every_entity_with_b():
    iob1 = ["I-PER", "I-PER", "O", "I-LOC", "I-ORG", "I-ORG", "B-ORG", "O", "I-MISC"]
    iob2 = ["B-PER", "I-PER", "O", "B-LOC", "B-ORG", "I-ORG", "B-ORG", "O", "B-MISC"]
    assert iob1_to_iob2(iob1) == iob2
    assert iob1_to_iob2(iob2) == iob2


def test_iob2_to_iob1_keeps_b_only_where_entities_of_one_type_touch():
    iob2 = ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "I-ORG", "B-ORG"]
    iob1 = ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG", "B-ORG"]
    assert iob2_to_iob1(iob2) == iob1
    assert iob2_to_iob1(iob1) == iob1


def test_detect_scheme():
    assert detect_scheme([["O", "B-PER", "I-PER"], ["B-LOC"]]) == IOB2
    assert detect_scheme([["O", "B-PER", "I-PER"], ["I-LOC"]]) == IOB1
    assert detect_scheme([["I-PER", "B-PER"]]) == IOB1


def test_data_without_i_tags_or_entities_counts_as_iob2():
    assert detect_scheme([["O", "B-PER", "B-PER", "O", "B-LOC"]]) == IOB2
    assert detect_scheme([["O", "O"], []]) == IOB2


def test_chunks_are_type_first_and_last_index():
    tags = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC", "B-ORG"]
    assert chunks(tags) == [("PER", 0, 1), ("LOC", 3, 3), ("LOC", 4, 5), ("ORG", 6, 6)]


def test_chunks_read_an_i_after_o_or_another_type_as_a_start_as_conlleval_does():
    tags = ["I-PER", "I-PER", "O", "I-LOC", "I-ORG", "B-ORG", "I-ORG", "I-LOC"]
    assert chunks(tags) == [
        ("PER", 0, 1),
        ("LOC", 3, 3),
        ("ORG", 4, 4),
        ("ORG", 5, 6),
        ("LOC", 7, 7),
    ]
    assert chunks(tags) == chunks(iob1_to_iob2(tags)) == chunks(iob2_to_iob1(tags))


def test_chunks_of_no_entities():
    assert chunks([]) == chunks(["O", "O"]) == []


def test_conll2003_valid_is_iob2_and_round_trips_through_iob1(valid_tags):
    iob1 = [iob2_to_iob1(tags) for tags in valid_tags]
    assert detect_scheme(valid_tags) == IOB2
    assert detect_scheme(iob1) == IOB1
    assert [iob1_to_iob2(tags) for tags in iob1] == valid_tags
    assert [chunks(tags) for tags in iob1] == [chunks(tags) for tags in valid_tags]


def test_chunks_of_conll2003_valid_are_the_entities_conlleval_counts(valid_tags):
    found = [chunk_type for tags in valid_tags for chunk_type, _, _ in chunks(tags)]
    result = evaluate((tags, tags) for tags in valid_tags)
    assert len(found) == result.overall.found_correct == 5942
    assert {t: found.count(t) for t in set(found)} == {
        t: score.found_correct for t, score in result.by_type.items()
    }
