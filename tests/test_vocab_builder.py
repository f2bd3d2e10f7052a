"""create_vocab learns a WordPiece vocabulary with the released vocabularies' special ids."""

from __future__ import annotations

from conftest import SAMPLE_DATA

from bert_tf.text.vocab_builder import build_vocab, count_words, reserved_tokens
from bert_tf.tokenization import FullTokenizer, load_vocab


def test_reserved_head_matches_the_released_vocabulary():
    released = list(load_vocab(SAMPLE_DATA / "vocab.txt"))
    assert reserved_tokens(30522) == released[:999]  # [PAD] .. [MASK] .. [unused993]
    small = reserved_tokens(8000)
    assert small == released[:104]
    assert [small.index(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [
        0, 100, 101, 102, 103,
    ]  # fmt: skip


def test_learned_vocab_tokenizes_its_corpus(tmp_path):
    corpus = str(SAMPLE_DATA / "sample_text.txt")
    vocab = build_vocab(count_words([corpus], do_lower_case=True), vocab_size=600, lower_thresh=1)
    assert 104 < len(vocab) <= 600 and len(set(vocab)) == len(vocab)
    assert vocab[:104] == reserved_tokens(600)
    path = tmp_path / "vocab.txt"
    path.write_text("".join(t + "\n" for t in vocab), encoding="utf-8")
    tokenizer = FullTokenizer(path, do_lower_case=True)
    tokens = [t for line in open(corpus, encoding="utf-8") for t in tokenizer.tokenize(line)]
    assert tokens.count("[UNK]") / len(tokens) < 0.01
    assert any(t.startswith("##") for t in tokens)
