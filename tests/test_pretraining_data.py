"""create_pretraining_data reproduces the original's records, record by record and in order."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES, ORACLE_FIXTURES, REPO, SAMPLE_DATA, error_line, run_script

from bert_tf.errors import InputError
from bert_tf.pretraining.dataset import read_records
from bert_tf.pretraining.documents import (
    documents_from_texts,
    expand_input_files,
    read_documents,
    tfds_texts,
)
from bert_tf.pretraining.generate import (
    create_pretraining_data,
    create_pretraining_data_per_file,
    shard_path,
)
from bert_tf.pretraining.instances import (
    GeneratorOptions,
    TrainingInstance,
    create_instances_from_document,
    truncate_seq_pair,
)
from bert_tf.pretraining.masking import (
    MaskingVocab,
    create_masked_lm_predictions,
    parse_masking_rates,
)
from bert_tf.pretraining.records import write_instances
from bert_tf.tokenization import FullTokenizer


def read_flags(path: Path) -> dict[str, str]:
    """flags/NAME.txt: the exact `--name=value` flags the original was run with."""
    return dict(line.strip()[2:].split("=", 1) for line in path.read_text().splitlines() if line)


def generate_as_the_original_did(flags: dict[str, str], resolve, output_dir: Path) -> list[Path]:
    """Runs our generator with the original's flags; `resolve` maps its relative paths."""
    tokenizer = FullTokenizer(
        resolve(flags["vocab_file"]), do_lower_case=flags.get("do_lower_case") == "True"
    )
    options = GeneratorOptions(
        max_seq_length=int(flags["max_seq_length"]),
        max_predictions_per_seq=int(flags["max_predictions_per_seq"]),
        dupe_factor=int(flags["dupe_factor"]),
        masked_lm_prob=float(flags.get("masked_lm_prob", 0.15)),
        short_seq_prob=float(flags.get("short_seq_prob", 0.1)),
        do_whole_word_mask=flags.get("do_whole_word_mask") == "True",
    )
    inputs = [resolve(p) for p in flags["input_file"].split(",")]
    outputs = [output_dir / name for name in flags["output_file"].split(",")]
    create_pretraining_data(
        inputs, [str(p) for p in outputs], tokenizer, options, int(flags["random_seed"])
    )
    return outputs


def assert_same_records(ours: Path, theirs: Path, flags: dict[str, str]) -> None:
    sizes = int(flags["max_seq_length"]), int(flags["max_predictions_per_seq"])
    mine, original = read_records(str(ours), *sizes), read_records(str(theirs), *sizes)
    assert len(mine) == len(original)
    for index, (a, b) in enumerate(zip(mine, original, strict=True)):
        for name in b:
            np.testing.assert_array_equal(a[name], b[name], err_msg=f"record {index}: {name}")


def test_cased_records_equal_the_originals(tmp_path):
    # The project's own copy of the oracle's small case: sample_text.txt, cased, 64 tokens.
    oracle = ORACLE_FIXTURES / "pretraining"
    flags = read_flags(oracle / "flags" / "cased.txt")
    files = {
        "corpus/sample_text.txt": SAMPLE_DATA / "sample_text.txt",
        "../vocab/cased_test_vocab.txt": FIXTURES / "tokenization" / "cased_test_vocab.txt",
    }
    [ours] = generate_as_the_original_did(flags, lambda p: str(files[p]), tmp_path)
    assert_same_records(ours, oracle / "cased.tfrecord", flags)


@pytest.mark.parametrize("name", ["seq128", "wwm", "seq512", "sharded"])
def test_records_equal_the_originals(name, shared_oracle, tmp_path):
    folder = shared_oracle / "pretraining"
    flags = read_flags(folder / "flags" / f"{name}.txt")
    outputs = generate_as_the_original_did(flags, lambda p: str(folder / p), tmp_path)
    for ours in outputs:
        assert_same_records(ours, folder / ours.name, flags)


# --- The algorithm's rules, one by one -----------------------------------------------------------

VOCAB = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##b"])}


def test_truncation_removes_from_the_longer_side_at_either_end():
    a, b = list(range(10)), [100, 101]
    truncate_seq_pair(a, b, 6, random.Random(0))
    assert len(a) == 4 and b == [100, 101]
    assert a == sorted(a) and set(a) <= set(range(10))
    # With ties B is the one shortened.
    a, b = [1, 2], [3, 4]
    truncate_seq_pair(a, b, 3, random.Random(0))
    assert a == [1, 2] and len(b) == 1


def test_num_to_predict_counts_cls_and_sep_and_rounds_half_to_even():
    vocab = MaskingVocab(VOCAB)
    tokens = [2] + [5] * 8 + [3]  # 10 tokens * 0.25 = 2.5 -> 2 (banker's rounding)
    _, positions, _ = create_masked_lm_predictions(tokens, 0.25, 20, vocab, random.Random(1))
    assert len(positions) == 2
    tokens = [2] + [5] * 12 + [3]  # 14 * 0.25 = 3.5 -> 4
    _, positions, _ = create_masked_lm_predictions(tokens, 0.25, 20, vocab, random.Random(1))
    assert len(positions) == 4
    assert 0 not in positions and 13 not in positions  # never [CLS] or [SEP]


def test_labels_are_the_original_tokens_and_replacements_follow_80_10_10():
    vocab = MaskingVocab(VOCAB)
    rng = random.Random(3)
    counts = {"mask": 0, "same": 0, "other": 0}
    for _ in range(2000):
        tokens = [2, 5, 5, 5, 5, 5, 3]
        output, positions, labels = create_masked_lm_predictions(tokens, 0.15, 20, vocab, rng)
        assert labels == [5] * len(positions)
        for p in positions:
            kind = "mask" if output[p] == 4 else "same" if output[p] == 5 else "other"
            counts[kind] += 1
    total = sum(counts.values())
    assert counts["mask"] / total == pytest.approx(0.8, abs=0.03)
    # A random word can be the same token, so "same" is a little above 10%.
    assert counts["same"] / total == pytest.approx(0.1 + 0.1 / len(VOCAB), abs=0.03)


def test_whole_word_masking_takes_every_piece_of_a_word():
    vocab = MaskingVocab(VOCAB, do_whole_word_mask=True)
    tokens = [2, 5, 6, 6, 5, 6, 3]  # words: (1, 2, 3) and (4, 5)
    chosen = set()
    for seed in range(20):
        _, positions, _ = create_masked_lm_predictions(tokens, 0.5, 20, vocab, random.Random(seed))
        # round(7 * 0.5) = 4 predictions: the first word drawn fits, the second would not
        # (as the original, a word that does not fit whole is skipped, never cut).
        chosen.add(tuple(positions))
    assert chosen == {(1, 2, 3), (4, 5)}


def test_per_word_decision_treats_all_pieces_of_a_word_alike():
    vocab = MaskingVocab(VOCAB, do_whole_word_mask=True)
    vocab.random_word_ids = [5]  # so that the three outcomes are told apart: 4, 6 or 5
    tokens = [2, 6, 6, 6, 6, 6, 3]  # one word: "##b" pieces join the first candidate
    outcomes = set()
    for seed in range(200):
        output, positions, _ = create_masked_lm_predictions(
            tokens, 0.9, 20, vocab, random.Random(seed), per_word_decision=True
        )
        replaced = {output[p] for p in positions}
        assert len(replaced) == 1  # [MASK], kept or random: the same for every piece
        outcomes |= replaced
    assert outcomes == {4, 5, 6}


def replacements(rates, per_word_decision=False, seeds=300) -> dict[str, float]:
    """How often a prediction's input is [MASK], the same token, another token, at `rates`
    (the random word is always "##b", which the input lacks, so the outcomes differ)."""
    vocab = MaskingVocab(VOCAB, do_whole_word_mask=per_word_decision)
    vocab.random_word_ids = [6]
    counts = {"mask": 0, "same": 0, "random": 0}
    for seed in range(seeds):
        tokens = [2, 5, 5, 5, 5, 5, 5, 5, 5, 3]
        output, positions, labels = create_masked_lm_predictions(
            tokens,
            0.3,
            20,
            vocab,
            random.Random(seed),
            per_word_decision=per_word_decision,
            masking_rates=rates,
        )
        assert labels == [5] * len(positions)
        for p in positions:
            counts[{4: "mask", 5: "same", 6: "random"}[output[p]]] += 1
    total = sum(counts.values())
    return {kind: count / total for kind, count in counts.items()}


@pytest.mark.parametrize(
    "rates", [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (0.8, 0.0, 0.2), (0, 0.2, 0.8)]
)
def test_masking_rates_set_how_often_mask_same_and_random_replace_a_prediction(rates):
    observed = replacements(rates)
    expected = dict(zip(("mask", "same", "random"), rates, strict=True))
    for kind, rate in expected.items():
        if rate in (0.0, 1.0):
            assert observed[kind] == rate, (kind, observed)
        else:
            assert observed[kind] == pytest.approx(rate, abs=0.04), (kind, observed)


def test_per_word_decisions_follow_the_masking_rates_too():
    vocab = MaskingVocab(VOCAB, do_whole_word_mask=True)
    vocab.random_word_ids = [5]
    tokens = [2, 5, 6, 6, 6, 3]  # one word of four pieces
    for rates, expected in (((0.0, 0.0, 1.0), {5}), ((0.0, 1.0, 0.0), {5, 6})):
        output, positions, _ = create_masked_lm_predictions(
            tokens, 0.9, 20, vocab, random.Random(0), True, rates
        )
        assert positions == [1, 2, 3, 4]
        assert {output[p] for p in positions} == expected
        if rates[1] == 1.0:
            assert output == tokens


def test_default_masking_rates_write_the_originals_records_byte_for_byte(tmp_path):
    oracle = ORACLE_FIXTURES / "pretraining"
    flags = read_flags(oracle / "flags" / "cased.txt")
    flags.update(
        input_file=str(SAMPLE_DATA / "sample_text.txt"),
        vocab_file=str(FIXTURES / "tokenization" / "cased_test_vocab.txt"),
    )
    outputs = {}
    for rates in (None, "0.8,0.1,0.1"):
        output = tmp_path / f"rates_{bool(rates)}.tfrecord"
        extra = [f"--masking_rates={rates}"] if rates else []
        args = [f"--{k}={v}" for k, v in dict(flags, output_file=output).items()]
        result = run_script("create_pretraining_data.py", *args, *extra, fresh=True)
        assert result.returncode == 0, result.stderr
        outputs[rates] = output
    assert outputs[None].read_bytes() == outputs["0.8,0.1,0.1"].read_bytes()
    assert_same_records(outputs["0.8,0.1,0.1"], oracle / "cased.tfrecord", flags)


@pytest.mark.parametrize(
    "text", ["0.8,0.2", "0.8,0.3,-0.1", "0.5,0.2,0.2", "a,b,c", "80,10,10", "nan,0.5,0.5"]
)
def test_masking_rates_must_be_three_fractions_summing_to_1(text):
    with pytest.raises(InputError, match=f"--masking_rates={text}; expected three fractions"):
        parse_masking_rates(text)


def test_one_segment_chunk_is_always_a_random_next_labelled_1(tmp_path):
    # Two one-line documents: every chunk has one segment, so every B is a random next.
    documents = [[[5, 5, 5]], [[6, 6]]]
    options = GeneratorOptions(max_seq_length=16, dupe_factor=1, short_seq_prob=0.0)
    instances = list(
        create_instances_from_document(documents, 0, options, MaskingVocab(VOCAB), random.Random(0))
    )
    assert [i.is_random_next for i in instances] == [True]
    [record] = write_and_read(instances, tmp_path, options)
    assert record["next_sentence_labels"].tolist() == [1]
    assert record["segment_ids"][:7].tolist() == [0, 0, 0, 0, 0, 1, 1]


def write_and_read(instances: list[TrainingInstance], tmp_path: Path, options) -> list[dict]:
    path = str(tmp_path / "out.tfrecord")
    write_instances(instances, [path], options.max_seq_length, options.max_predictions_per_seq)
    return read_records(path, options.max_seq_length, options.max_predictions_per_seq)


def test_a_failed_write_leaves_no_file(tmp_path):
    def instances():
        yield TrainingInstance(
            np.array([2, 5, 3, 6, 3], np.int32), 3, np.array([1]), np.array([5]), False
        )
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        write_instances(instances(), [str(tmp_path / "a"), str(tmp_path / "b")], 8, 2)
    assert list(tmp_path.iterdir()) == []


def test_blank_lines_split_documents_and_bad_bytes_are_dropped(tmp_path):
    path = tmp_path / "corpus.txt"
    # A NUL byte past the head that tells a binary file (fileio.BINARY_HEAD) is dropped too.
    path.write_bytes(b"a b\r\n\xffa\n\n\n" + b" " * 8000 + b"\x00\nb\n")
    tokenizer = FullTokenizer(SAMPLE_DATA / "vocab.txt")
    documents = read_documents([str(path)], tokenizer)
    a, b = tokenizer.vocab["a"], tokenizer.vocab["b"]
    assert documents == [[[a, b], [a]], [[b]]]


def test_missing_input_pattern_is_named(tmp_path):
    with pytest.raises(InputError, match="no file matches"):
        expand_input_files(f"{SAMPLE_DATA / 'sample_text.txt'},{tmp_path / 'nope*.txt'}")


@pytest.mark.parametrize(
    "flags, fragments",
    [
        (["--input_file=nope.txt"], ["--input_file=nope.txt", "no file matches"]),
        (["--max_predictions_per_seq=200"], ["--max_predictions_per_seq=200", "expected 1 to"]),
        (["--output_file=/nonexistent/x.tfrecord"], ["/nonexistent", "does not exist"]),
        (["--input_file=EMPTY"], ["no tokens"]),
        (["--masking_rates=0.8,0.1"], ["--masking_rates=0.8,0.1", "MASK,SAME,RND"]),
    ],
)
def test_bad_input_is_one_error_line(flags, fragments, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    defaults = {
        "--input_file": str(SAMPLE_DATA / "sample_text.txt"),
        "--output_file": str(tmp_path / "out.tfrecord"),
        "--vocab_file": str(SAMPLE_DATA / "vocab.txt"),
    }
    for flag in flags:
        name, value = flag.split("=", 1)
        defaults[name] = str(empty) if value == "EMPTY" else value
    result = run_script("create_pretraining_data.py", *(f"{k}={v}" for k, v in defaults.items()))
    last = error_line(result, "create_pretraining_data.py")
    for fragment in fragments:
        assert fragment in last
    assert not (tmp_path / "out.tfrecord").exists()


def _generate(tmp_path, **flags):
    values = {
        "input_file": SAMPLE_DATA / "sample_text.txt",
        "output_file": tmp_path / "out.tfrecord",
        "vocab_file": SAMPLE_DATA / "vocab.txt",
        **flags,
    }
    return run_script("create_pretraining_data.py", *(f"--{k}={v}" for k, v in values.items()))


def test_a_vocab_without_mask_is_one_error_line_naming_it(tmp_path):
    vocab = tmp_path / "vocab.txt"
    lines = (SAMPLE_DATA / "vocab.txt").read_text(encoding="utf-8").splitlines()
    vocab.write_text("".join(f"{t}\n" for t in lines if t != "[MASK]"), encoding="utf-8")
    last = error_line(_generate(tmp_path, vocab_file=vocab), "create_pretraining_data.py")
    assert f"vocab file '{vocab}' has no [MASK]" in last
    assert not (tmp_path / "out.tfrecord").exists()


def test_a_folder_as_input_is_one_error_line(tmp_path):
    last = error_line(_generate(tmp_path, input_file=SAMPLE_DATA), "create_pretraining_data.py")
    assert f"{SAMPLE_DATA} is a folder; expected files" in last


def test_text_that_is_not_utf8_warns_by_default_and_stops_with_strict_utf8(tmp_path):
    corpus = tmp_path / "latin1.txt"
    text = (SAMPLE_DATA / "sample_text.txt").read_text(encoding="utf-8").replace("é", "e")
    corpus.write_bytes(text.replace("the", "thé", 3).encode("latin-1", "replace"))
    warned = _generate(tmp_path, input_file=corpus)
    assert warned.returncode == 0, warned.stderr[-2000:]
    assert f"{corpus}: 3 byte(s) that are not UTF-8 were dropped" in warned.stderr
    last = error_line(
        _generate(tmp_path, input_file=corpus, strict_utf8=True), "create_pretraining_data.py"
    )
    assert f"{corpus}:5: 3 byte(s) that are not UTF-8" in last  # all three on line 5


def test_a_stray_nul_in_the_head_gives_the_originals_records(tmp_path):
    # The original reads the NUL and its tokenizer drops it (BasicTokenizer._clean_text): the
    # records are those of the text without it.
    text = (SAMPLE_DATA / "sample_text.txt").read_bytes()
    with_nul = tmp_path / "with_nul.txt"
    with_nul.write_bytes(text.replace(b"Text", b"Te\x00xt", 1))
    assert with_nul.read_bytes().index(b"\x00") < 8000  # in the head that tells a binary file
    records = {}
    for corpus in (SAMPLE_DATA / "sample_text.txt", with_nul):
        output = tmp_path / f"{corpus.stem}.tfrecord"
        result = _generate(tmp_path, input_file=corpus, output_file=output)
        assert result.returncode == 0, result.stderr[-2000:]
        records[corpus.stem] = output.read_bytes()
    assert records["with_nul"] == records["sample_text"]


def test_a_read_only_output_folder_is_one_error_line_before_any_work(tmp_path, mounted_disk):
    output = mounted_disk("64k", read_only=True) / "out.tfrecord"
    last = error_line(_generate(tmp_path, output_file=output), "create_pretraining_data.py")
    assert f"--output_file: cannot write in {output.parent} (Read-only file system)" in last


def test_a_full_disk_is_one_error_line_and_leaves_no_records(tmp_path, mounted_disk):
    output = mounted_disk("64k") / "out.tfrecord"
    last = error_line(_generate(tmp_path, output_file=output), "create_pretraining_data.py")
    assert f"{output}: cannot write (No space left on device)" in last
    assert list(output.parent.iterdir()) == []


# --- Per-file mode (--num_workers), beyond the original --------------------------------------


@pytest.fixture(scope="module")
def two_files(tmp_path_factory) -> list[str]:
    """sample_text.txt cut into two corpus files at a document boundary."""
    folder = tmp_path_factory.mktemp("corpus")
    text = (SAMPLE_DATA / "sample_text.txt").read_text(encoding="utf-8")
    first, second = text.split("\n\n", 1)
    paths = [folder / "a.txt", folder / "b.txt"]
    paths[0].write_text(first + "\n", encoding="utf-8")
    paths[1].write_text(second, encoding="utf-8")
    return [str(p) for p in paths]


PER_FILE_OPTIONS = GeneratorOptions(max_seq_length=64, max_predictions_per_seq=10, dupe_factor=2)


def test_each_shard_equals_a_single_run_on_its_file_with_seed_plus_index(two_files, tmp_path):
    vocab_file = str(SAMPLE_DATA / "vocab.txt")
    prefix = str(tmp_path / "per_file.tfrecord")
    total = create_pretraining_data_per_file(
        two_files, prefix, vocab_file, True, PER_FILE_OPTIONS, random_seed=7, num_workers=1
    )
    tokenizer = FullTokenizer(vocab_file)
    counted = 0
    for index, input_file in enumerate(two_files):
        alone = str(tmp_path / f"alone-{index}.tfrecord")
        create_pretraining_data([input_file], [alone], tokenizer, PER_FILE_OPTIONS, 7 + index)
        shard = shard_path(prefix, index, 2)
        assert Path(shard).read_bytes() == Path(alone).read_bytes()
        counted += len(read_records(shard, 64, 10))
    assert counted == total > 0


def test_shards_do_not_depend_on_the_number_of_workers(two_files, tmp_path):
    vocab_file = str(SAMPLE_DATA / "vocab.txt")
    shards = {}
    for workers in (1, 2):
        prefix = str(tmp_path / f"w{workers}.tfrecord")
        create_pretraining_data_per_file(
            two_files, prefix, vocab_file, True, PER_FILE_OPTIONS, num_workers=workers
        )
        shards[workers] = [Path(shard_path(prefix, i, 2)).read_bytes() for i in range(2)]
    assert shards[1] == shards[2]


def test_two_phase_script_writes_128_and_512_token_data(tmp_path):
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    result = subprocess.run(
        ["bash", "scripts/create_pretraining_data_two_phases.sh",
         str(SAMPLE_DATA / "sample_text.txt"), str(tmp_path), "", "1"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    for folder, sizes in (("phase1_seq128", (128, 20)), ("phase2_seq512", (512, 80))):
        [shard] = (tmp_path / folder).iterdir()
        assert shard.name == "part.tfrecord-00000-of-00001"
        records = read_records(str(shard), *sizes)
        assert records and records[0]["input_ids"].shape == (sizes[0],)


# --- Text from tensorflow-datasets, beyond the original -------------------------------------


def test_each_text_is_a_document_of_sentences():
    tokenizer = FullTokenizer(SAMPLE_DATA / "vocab.txt")
    documents = documents_from_texts(["The cat sat. The dog ran.", "", "Hello."], tokenizer)
    v = tokenizer.vocab
    assert documents == [
        [[v["the"], v["cat"], v["sat"], v["."]], [v["the"], v["dog"], v["ran"], v["."]]],
        [[v["hello"], v["."]]],
    ]


def test_reads_a_prepared_tfds_text_set(tmp_path):
    tfds = pytest.importorskip("tensorflow_datasets")
    with tfds.testing.mock_data(num_examples=4):
        texts = list(tfds_texts("wikipedia/20230601.en", "train", None, "text"))
    assert len(texts) == 4 and all(isinstance(t, str) for t in texts)


def test_a_tfds_set_not_prepared_here_is_named(tmp_path):
    with pytest.raises(InputError, match="--tfds_name=wikipedia/20230601.en"):
        next(tfds_texts("wikipedia/20230601.en", "train", str(tmp_path), "text"))
