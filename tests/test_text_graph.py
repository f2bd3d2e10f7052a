"""bert_tf.text.text_graph: the in-graph tokenizer gives FullTokenizer's ids, and packs as
bert_tf.text.packing does."""

from __future__ import annotations

import gc
import os

import numpy as np
import pytest
import tensorflow as tf
from conftest import CASINGS, UNCASED_VOCAB, tokenization_cases

from bert_tf import tokenization
from bert_tf.errors import InputError
from bert_tf.text.packing import pack_tokens, pad_inputs
from bert_tf.text.text_graph import InGraphTokenizer

# Texts on which the in-graph tokenizer differs from the original; each is explained in
# text_graph.py's docstring. Keep this empty where possible.
KNOWN_DIFFERENCES: set[str] = set()


@pytest.mark.parametrize(
    ("case_name", "vocab_file", "do_lower_case"),
    CASINGS,
)
def test_ids_equal_the_originals_on_the_oracle_cases(case_name, vocab_file, do_lower_case):
    cases = tokenization_cases()
    tokenizer = InGraphTokenizer(str(vocab_file), do_lower_case=do_lower_case)
    ids = tokenizer.tokenize(tf.constant([case["text"] for case in cases])).to_list()
    mismatches = [
        f"{case['text']!r}: got {got} expected {case[f'{case_name}_ids']}"
        for case, got in zip(cases, ids, strict=True)
        if got != case[f"{case_name}_ids"] and case["text"] not in KNOWN_DIFFERENCES
    ]
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ:\n" + "\n".join(
        mismatches[:10]
    )


def test_bytes_that_are_not_utf8_are_dropped():
    tokenizer = InGraphTokenizer(str(UNCASED_VOCAB))
    full = tokenization.FullTokenizer(str(UNCASED_VOCAB))
    text = b"caf\xff\xfeing hello"
    expected = full.convert_tokens_to_ids(full.tokenize(text))
    assert tokenizer.tokenize(tf.constant([text])).to_list() == [expected]


@pytest.mark.parametrize("seq_length", [5, 6, 8, 12, 40])
def test_packing_truncates_and_pads_as_the_python_packing(seq_length):
    rng = np.random.default_rng(seq_length)
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, 12, (40, 2))]
    pairs += [(0, 0), (3, 0), (0, 3), (seq_length, seq_length), (seq_length, 1)]
    tokenizer = InGraphTokenizer(str(UNCASED_VOCAB))
    a = tf.ragged.constant([list(range(100, 100 + la)) for la, _ in pairs], tf.int64)
    b = tf.ragged.constant([list(range(200, 200 + lb)) for _, lb in pairs], tf.int64)
    packed = {k: v.numpy() for k, v in tokenizer.pack(a, b, seq_length).items()}
    vocab = tokenization.load_vocab(UNCASED_VOCAB)
    for i, (la, lb) in enumerate(pairs):
        tokens, segments = pack_tokens(
            [str(t) for t in range(100, 100 + la)], [str(t) for t in range(200, 200 + lb)],
            seq_length,
        )  # fmt: skip
        ids = [vocab[t] if t in ("[CLS]", "[SEP]") else int(t) for t in tokens]
        ids, mask, segments = pad_inputs(ids, segments, seq_length)
        assert packed["input_ids"][i].tolist() == ids, (la, lb)
        assert packed["input_mask"][i].tolist() == mask, (la, lb)
        assert packed["segment_ids"][i].tolist() == segments, (la, lb)


def test_packing_to_the_longest_is_packing_to_max_length_cut_at_the_longest_row():
    tokenizer = InGraphTokenizer(str(UNCASED_VOCAB))
    a = tf.ragged.constant([[100, 101], [100, 101, 102, 103, 104]], tf.int64)
    b = tf.ragged.constant([[200], []], tf.int64)
    full = tokenizer.pack(a, b, 12)
    short = tokenizer.pack(a, b, 12, to_longest=True)
    for name, values in short.items():
        assert values.shape == (2, 7), name  # [CLS] + 5 + [SEP]
        np.testing.assert_array_equal(values, full[name][:, :7], err_msg=name)
    # Truncation is still at max length.
    assert tokenizer.pack(a, b, 5, to_longest=True)["input_ids"].shape == (2, 5)


def test_a_vocab_with_a_token_twice_is_refused(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nhello\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"vocab.txt:6: token 'hello' already on line 5"):
        InGraphTokenizer(str(vocab))


def test_ids_equal_the_originals_on_the_glue_dev_sets(shared_oracle):
    glue = shared_oracle.parent / "data" / "glue"
    if not glue.is_dir():
        pytest.skip("../shared/data/glue is absent")
    from bert_tf.classification.processors import get_processor

    texts = []
    for task in ("MRPC", "RTE", "STS-B", "SST-2"):
        for example in get_processor(task).get_dev_examples(str(glue / task)):
            texts += [example.text_a] + ([example.text_b] if example.text_b else [])
    full = tokenization.FullTokenizer(str(UNCASED_VOCAB), do_lower_case=True)
    expected = [full.convert_tokens_to_ids(full.tokenize(text)) for text in texts]
    got = InGraphTokenizer(str(UNCASED_VOCAB)).tokenize(tf.constant(texts)).to_list()
    differing = [text for text, a, b in zip(texts, got, expected, strict=True) if a != b]
    assert len(texts) > 5000
    assert not differing, f"{len(differing)} of {len(texts)} differ, first: {differing[:3]}"


def test_the_scratch_copy_of_the_vocab_is_in_memory_and_goes_with_the_tokenizer():
    tokenizer = InGraphTokenizer(str(UNCASED_VOCAB))
    scratch = tokenizer._scratch
    assert scratch.startswith("ram://")  # no disk: a TPU VM's may be small, the run's on gs://
    assert tf.io.gfile.exists(os.path.join(scratch, "vocab.txt"))
    del tokenizer
    gc.collect()
    assert not tf.io.gfile.exists(os.path.join(scratch, "vocab.txt"))


def test_a_tokenizer_made_after_another_is_freed_reads_its_own_vocab(tmp_path):
    # A named lookup table took its name from the vocab Asset's memory address: a tokenizer
    # made where a freed one had lived read the freed one's table (a model of 44 tokens was fed
    # ids of 30,522). CPython reuses a freed object's memory, so a few rounds meet it.
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    other = tmp_path / "other.txt"
    other.write_text("".join(t + "\n" for t in specials + [f"w{i}" for i in range(9)] + ["hello"]))
    own = tmp_path / "own.txt"
    own.write_text("".join(t + "\n" for t in specials + ["hello"]))
    for _ in range(50):
        InGraphTokenizer(str(other))  # freed at once
        assert InGraphTokenizer(str(own)).vocab_table.lookup(tf.constant("hello")) == 4
