"""bert_tf.ner.conlleval counts and prints exactly what CoNLL's conlleval.pl does.

The expected reports are the script's own output (tests/fixtures/conlleval/README.md).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import FIXTURES
from fixtures.conlleval.make_fixtures import CONLL2003_VALID, conll2003_lines

from bert_tf.errors import InputError
from bert_tf.ner.conlleval import (
    ChunkScore,
    ConllevalResult,
    evaluate,
    evaluate_lines,
    metrics,
    parse_tag,
    report,
)
from bert_tf.ner.tagging import IOB1, IOB2

CONLLEVAL_FIXTURES = FIXTURES / "conlleval"
CASES = sorted(p for p in (CONLLEVAL_FIXTURES / "cases").iterdir() if p.suffix != ".expected")
HEADER = re.compile(
    r"processed (\d+) tokens with (\d+) phrases; found: (\d+) phrases; correct: (\d+)\.\n"
)


def perl_lines(path: Path) -> list[str]:
    """A file's lines as Perl reads them: split at "\\n" only, each keeping its "\\n"."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", path.read_bytes().decode("utf-8"))


def delimiter(case: Path) -> str:
    return "\t" if case.suffix == ".tsv" else " "


def sentences(lines: list[str], delimiter: str = " ") -> list[tuple[list[str], list[str]]]:
    """(gold tags, guessed tags) per blank-line separated block of conlleval input."""
    blocks = "".join(lines).split("\n\n")
    rows = [[line.split(delimiter) for line in b.strip("\n").split("\n")] for b in blocks]
    return [([r[-2] for r in block], [r[-1] for r in block]) for block in rows if block[0][0]]


@pytest.fixture
def conll2003_valid() -> Path:
    if not CONLL2003_VALID.is_file():
        pytest.skip("../shared/data/conll2003/valid.txt is absent")
    return CONLL2003_VALID


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_report_is_conllevals_output_byte_for_byte(case):
    result = evaluate_lines(perl_lines(case), delimiter(case))
    assert report(result).encode("utf-8") == case.with_suffix(".expected").read_bytes()


# The cases in IOB tags, where a sentence list says what the file says.
IOB_CASES = [
    case
    for case in CASES
    if case.stem
    in {
        "iob1_sentences",
        "iob2_sentences",
        "i_after_o_and_type_change",
        "b_after_i_of_another_type",
        "chunks_at_sentence_ends",
        "docstart_lines",
        "no_entities",
        "all_o_guesses",
        "nothing_correct",
        "type_only_guessed",
        "random_iob",
        "tab_delimited",
    }
]


@pytest.mark.parametrize("case", IOB_CASES, ids=lambda case: case.name)
def test_evaluate_on_sentences_counts_as_conlleval(case):
    result = evaluate(sentences(perl_lines(case), delimiter(case)))
    expected = case.with_suffix(".expected").read_text(encoding="utf-8")
    tokens, gold, guessed, correct = map(int, HEADER.match(expected).groups())
    overall = result.overall
    assert (result.token_count, overall.found_correct) == (tokens, gold)
    assert (overall.found_guessed, overall.correct_chunks) == (guessed, correct)
    assert report(result) == expected
    assert result == evaluate_lines(perl_lines(case), delimiter(case))


def test_counts_and_percentages_of_a_small_example():
    gold = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC"]
    guessed = ["B-PER", "I-PER", "O", "B-LOC", "O"]
    result = evaluate([(gold, guessed), (["O"], ["B-ORG"])])
    assert (result.token_count, result.correct_tags) == (6, 4)
    assert result.overall == ChunkScore(correct_chunks=2, found_correct=3, found_guessed=3)
    assert list(result.by_type) == ["LOC", "ORG", "PER"]
    assert result.by_type["LOC"] == ChunkScore(1, 2, 1)
    assert result.by_type["ORG"] == ChunkScore(0, 0, 1)
    assert (result.by_type["LOC"].precision, result.by_type["LOC"].recall) == (100.0, 50.0)
    assert result.overall.fb1 == pytest.approx(2 / 3 * 100)
    assert result.accuracy == pytest.approx(4 / 6 * 100)


def test_a_chunk_is_correct_only_with_the_same_extent_and_type():
    gold = ["B-PER", "I-PER", "O"]
    for guessed in (["B-PER", "O", "O"], ["B-PER", "I-PER", "I-PER"], ["B-ORG", "I-ORG", "O"]):
        assert evaluate([(gold, guessed)]).overall.correct_chunks == 0
    assert evaluate([(gold, ["I-PER", "I-PER", "O"])]).overall.correct_chunks == 1


def test_a_sentence_boundary_ends_chunks():
    split = evaluate([(["B-PER"], ["B-PER"]), (["I-PER"], ["I-PER"])])
    assert split.overall == ChunkScore(2, 2, 2)


def test_zero_denominators_give_zero_percentages():
    assert ChunkScore(0, 0, 0).precision == ChunkScore(0, 0, 0).recall == 0.0
    assert ChunkScore(0, 0, 0).fb1 == 0.0
    assert ConllevalResult(0, 0, ChunkScore(0, 0, 0), {}).accuracy == 0.0


def test_without_tokens_the_report_has_only_its_header():
    assert report(evaluate_lines(["\n", "-X- O O\n"])) == (
        "processed 0 tokens with 0 phrases; found: 0 phrases; correct: 0.\n"
    )


def test_a_docstart_line_is_a_scored_word_and_an_x_line_a_boundary():
    result = evaluate_lines(["-DOCSTART- -X- O B-PER\n", "-X- -X- B-PER B-PER\n"])
    assert (result.token_count, result.overall.found_guessed) == (1, 1)


def test_tags_split_at_their_first_hyphen_and_type_0_is_no_type():
    assert parse_tag("B-MISC-X") == ("B", "MISC-X")
    assert parse_tag("I") == ("I", "")
    assert parse_tag("B-0") == ("B", "")


def test_s_tags_are_not_single_word_chunks_to_conlleval():
    result = evaluate([(["S-PER", "S-PER"], ["S-PER", "S-PER"])])
    assert result.overall == ChunkScore(1, 1, 1)


def test_a_line_with_another_field_count_is_rejected_with_its_number():
    lines = ["EU NNP B-ORG B-ORG\n", "\n", "rejects O O\n"]
    with pytest.raises(InputError, match=r"line 3 has 3 fields, expected 4"):
        evaluate_lines(lines)


def test_a_word_line_needs_two_tags():
    with pytest.raises(InputError, match=r"line 1 has 1 field"):
        evaluate_lines(["B-PER\n"])


def test_sentences_need_a_guessed_tag_per_gold_tag():
    with pytest.raises(InputError, match=r"sentence 1 has 2 gold tags but 1 guessed tags"):
        evaluate([(["O"], ["O"]), (["B-PER", "I-PER"], ["B-PER"])])


def test_metrics_are_conllevals_percentages_overall_and_per_type():
    result = evaluate([(["B-PER", "O", "B-LOC"], ["B-PER", "O", "O"])])
    assert metrics(result) == {
        "precision": 100.0,
        "recall": 50.0,
        "f1": pytest.approx(200 / 3),
        "accuracy": pytest.approx(200 / 3),
        "LOC_precision": 0.0,
        "LOC_recall": 0.0,
        "LOC_f1": 0.0,
        "PER_precision": 100.0,
        "PER_recall": 100.0,
        "PER_f1": 100.0,
    }


@pytest.mark.parametrize("scheme", [IOB2, IOB1])
def test_matches_conlleval_on_conll2003_valid(conll2003_valid, scheme):
    lines = conll2003_lines(conll2003_valid, scheme)
    expected = CONLLEVAL_FIXTURES / f"conll2003_valid_{scheme.lower()}.expected"
    assert report(evaluate_lines(lines)) == expected.read_text(encoding="utf-8")


def test_iob1_and_iob2_versions_of_conll2003_valid_have_the_same_chunk_counts(conll2003_valid):
    iob2 = sentences(conll2003_lines(conll2003_valid, IOB2))
    iob1 = sentences(conll2003_lines(conll2003_valid, IOB1))
    assert evaluate(iob1).overall == evaluate(iob2).overall
    assert evaluate(iob1).by_type == evaluate(iob2).by_type
    gold_against_gold = evaluate(
        (g1, g2) for (g1, _), (g2, _) in zip(iob1, iob2, strict=True)
    ).overall
    assert gold_against_gold == ChunkScore(5942, 5942, 5942)
