"""A WordPiece vocab.txt learned from a corpus, laid out like the released vocabularies.

Words are split by the original's BasicTokenizer (the same split FullTokenizer applies when the
vocabulary is used) and the pieces are learned by tensorflow-text's WordPiece learner.

Layout: ids 0-103 are always `[PAD]`, `[unused0]`..`[unused98]`, `[UNK]` (100), `[CLS]` (101),
`[SEP]` (102), `[MASK]` (103), as in the released vocabularies, so the usual special ids hold.
For `vocab_size >= 30522` the released models' second block `[unused99]`..`[unused993]`
(ids 104-998) follows too, leaving room to add domain tokens later without resizing; smaller
vocabularies skip it. Learned pieces fill the rest.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterable, Mapping

from bert_tf.errors import InputError
from bert_tf.io.fileio import read_lines
from bert_tf.tokenization import BasicTokenizer, WordpieceTokenizer

RELEASED_VOCAB_SIZE = 30522


def reserved_tokens(vocab_size: int) -> list[str]:
    """The special and [unused*] tokens at the head of a vocabulary of `vocab_size`."""
    head = ["[PAD]", *(f"[unused{i}]" for i in range(99)), "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    if vocab_size >= RELEASED_VOCAB_SIZE:
        head += [f"[unused{i}]" for i in range(99, 994)]
    return head


def count_words(
    input_files: Iterable[str], do_lower_case: bool, strict_utf8: bool = False
) -> collections.Counter:
    """How often each basic token (the original's whitespace/punctuation split) occurs; bytes
    that are not UTF-8 are dropped with a warning, or with `strict_utf8` an `InputError`."""
    tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
    counts: collections.Counter = collections.Counter()
    for path in input_files:
        for line in read_lines(path, strict_utf8):
            counts.update(tokenizer.tokenize(line))
    return counts


def build_vocab(
    word_counts: collections.Counter, vocab_size: int, lower_thresh: int = 10
) -> list[str]:
    """Learns up to `vocab_size` tokens: the reserved head, then WordPiece pieces."""
    from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

    head = reserved_tokens(vocab_size)
    if vocab_size <= len(head):
        raise InputError(f"--vocab_size={vocab_size}, expected more than {len(head)}")
    if not word_counts:
        raise InputError("--input_file: the corpus has no words")
    learned = learner.learn(
        dict(word_counts),
        vocab_size=vocab_size - len(head),
        reserved_tokens=[],
        lower_thresh=lower_thresh,
    )
    pieces = [piece for piece in learned if piece not in set(head)]
    return head + pieces[: vocab_size - len(head)]


# Domain words into a released vocabulary (continued pre-training, issue 49). ------------------

UNUSED = re.compile(r"\[unused\d+\]")


def wordpiece_count(word_counts: Mapping[str, int], vocab: Mapping[str, int]) -> int:
    """How many WordPiece tokens the words of `word_counts` make, each as often as counted."""
    pieces = WordpieceTokenizer(vocab)
    return sum(len(pieces.tokenize(word)) * count for word, count in word_counts.items())


def split_words(word_counts: Mapping[str, int], vocab: Mapping[str, int]) -> list[str]:
    """The words `vocab` does not hold whole (split into several pieces, or [UNK]), the most
    frequent first (ties by the word): the candidates for its `[unusedN]` slots."""
    pieces = WordpieceTokenizer(vocab)
    split = [word for word in word_counts if pieces.tokenize(word) != [word]]
    return sorted(split, key=lambda word: (-word_counts[word], word))


def extend_vocab(vocab: list[str], words: Iterable[str]) -> tuple[list[str], list[str]]:
    """`vocab` with `words` in place of its `[unusedN]` tokens, the lowest ids first, and the
    words put in. Every other token keeps its id, so a checkpoint of `vocab` still fits: the
    rows of the `[unusedN]` tokens are the ones its model never trained. Words `vocab` already
    holds are left out; so are those beyond its free slots (the most frequent first wins).

    Raises:
        InputError: `vocab` has no `[unusedN]` token.
    """
    slots = [i for i, token in enumerate(vocab) if UNUSED.fullmatch(token)]
    if not slots:
        raise InputError("the vocab has no [unusedN] tokens to replace")
    held = set(vocab)
    new = [word for word in dict.fromkeys(words) if word not in held][: len(slots)]
    extended = list(vocab)
    for slot, word in zip(slots, new, strict=False):
        extended[slot] = word
    return extended, new
