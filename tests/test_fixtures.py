"""The repo's copies of oracle files are exactly the oracle's."""

from __future__ import annotations

from conftest import FIXTURES, ORACLE_FIXTURES, SAMPLE_DATA


def test_oracle_fixture_copies_are_byte_identical(shared_oracle):
    copies = [p for p in ORACLE_FIXTURES.rglob("*") if p.is_file() and p.name != "README.md"]
    pairs = [(copy, shared_oracle / copy.relative_to(ORACLE_FIXTURES)) for copy in copies]
    pairs += [
        (FIXTURES / "tokenization" / "cases.jsonl", shared_oracle / "tokenization" / "cases.jsonl"),
        (
            FIXTURES / "tokenization" / "cased_test_vocab.txt",
            shared_oracle / "vocab" / "cased_test_vocab.txt",
        ),
        (SAMPLE_DATA / "vocab.txt", shared_oracle / "vocab" / "uncased_vocab.txt"),
        (SAMPLE_DATA / "sample_text.txt", shared_oracle / "pretraining/corpus/sample_text.txt"),
    ]
    assert len(pairs) >= 11
    for copy, source in pairs:
        assert copy.read_bytes() == source.read_bytes(), f"{copy} differs from {source}"
