"""Outputs appear whole or not at all, with ordinary permissions."""

from __future__ import annotations

import errno
import gzip
import io
import logging
import os
import re
import stat
import struct
import subprocess
import sys
import zipfile
import zlib

import pytest
from conftest import SAMPLE_DATA

from bert_tf.errors import InputError
from bert_tf.io.fileio import (
    atomic_open,
    atomic_write_text,
    check_output_file,
    check_writable_folder,
    decode_utf8,
    read_lines,
    read_text,
)
from bert_tf.io.tfrecord import encode_example, write_records
from bert_tf.tokenization import FullTokenizer

SAMPLE_TEXT = (SAMPLE_DATA / "sample_text.txt").read_text(encoding="utf-8")


def test_written_file_has_the_permissions_open_would_give(tmp_path):
    path = tmp_path / "out.txt"
    atomic_write_text(path, "x\n")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask


def test_a_failed_write_leaves_nothing_under_the_real_name(tmp_path):
    path = tmp_path / "out.txt"
    with pytest.raises(RuntimeError), atomic_open(path) as f:
        f.write("half")
        raise RuntimeError("crash")
    assert list(tmp_path.iterdir()) == []


class _FullDisk(io.StringIO):
    def write(self, text):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_is_one_error_naming_the_file_and_leaves_nothing(tmp_path, monkeypatch):
    path = tmp_path / "out.txt"
    real_open = open
    monkeypatch.setattr(
        "builtins.open",
        lambda p, *a, **k: _FullDisk() if ".tmp-" in str(p) else real_open(p, *a, **k),
    )
    with pytest.raises(InputError, match=f"{path}: cannot write \\(No space left on device\\)"):
        atomic_write_text(path, "x\n")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_a_really_full_disk_is_the_same_error(mounted_disk):
    disk = mounted_disk("16k")
    with pytest.raises(InputError, match="No space left on device"):
        atomic_write_text(disk / "out.txt", "x" * 100_000)
    assert list(disk.iterdir()) == []


def test_a_read_only_folder_is_named_with_the_flag_before_any_work(mounted_disk):
    disk = mounted_disk("16k", read_only=True)
    with pytest.raises(InputError, match=f"--output_dir: cannot write in {disk} \\(Read-only"):
        check_writable_folder(str(disk), "--output_dir")
    check_writable_folder(str(mounted_disk("16k")), "--output_dir")  # a writable one passes


def test_temporary_files_of_killed_runs_are_removed_by_the_next_write(tmp_path, caplog):
    path = tmp_path / "out.txt"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    left = tmp_path / f"out.txt.tmp-{dead}-k1ll3d"
    writing = tmp_path / f"out.txt.tmp-{os.getpid()}-st1ll"  # a live process's: kept
    left.write_text("half")
    writing.write_text("half")
    with caplog.at_level(logging.WARNING):
        atomic_write_text(path, "x\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt", writing.name]
    assert f"removed {left}, left by an interrupted run" in caplog.text


def test_bytes_that_are_not_utf8_are_dropped_and_counted_once_per_file(tmp_path, caplog):
    path = tmp_path / "latin1.txt"
    path.write_bytes("Café\nna\xefve\nok\n".encode("latin-1"))
    with caplog.at_level(logging.WARNING):
        lines = list(read_lines(path))
    assert lines == ["Caf\n", "nave\n", "ok\n"]  # as the original
    [warning] = caplog.messages
    assert f"{path}: 2 byte(s) that are not UTF-8 were dropped" in warning


def test_strict_utf8_makes_them_an_error_naming_the_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("ok\nCafé\n".encode("latin-1"))
    with pytest.raises(InputError, match=f"{path}:2: 1 byte\\(s\\) that are not UTF-8"):
        list(read_lines(path, strict_utf8=True))


def read_every_kind(kind: str, path: str):
    """Each reader of a file a user gives: task data, configs, corpora, feature inputs."""
    from bert_tf.config import BertConfig
    from bert_tf.extraction.features import read_examples
    from bert_tf.ner.data import read_conll_file
    from bert_tf.squad.data import read_squad_file
    from bert_tf.swag.data import read_swag_examples

    readers = {
        "CoNLL": read_conll_file,
        "SWAG": read_swag_examples,
        "SQuAD": read_squad_file,
        "bert_config": BertConfig.from_json_file,
        "corpus": lambda p: list(read_lines(p)),
        "extract_features": read_examples,
    }
    return readers[kind](path)


KINDS = ["CoNLL", "SWAG", "SQuAD", "bert_config", "corpus", "extract_features"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_binary_file_given_for_text_is_refused_naming_the_file_and_line(kind, tmp_path):
    path = tmp_path / "data"
    path.write_bytes(b"first line\n" + bytes(range(256)))  # a NUL on line 2
    with pytest.raises(InputError) as error:
        read_every_kind(kind, str(path))
    assert str(error.value).startswith(f"{path}:2: a NUL byte, as in a binary file; expected ")


@pytest.mark.parametrize("kind", ["CoNLL", "SWAG", "SQuAD", "bert_config"])
def test_a_task_file_that_is_not_utf8_names_the_file_line_and_byte(kind, tmp_path):
    path = tmp_path / "data"
    path.write_bytes(b"first line\nCaf\xe9 -X- O\n")
    with pytest.raises(InputError) as error:
        read_every_kind(kind, str(path))
    assert str(error.value).startswith(f"{path}:2: byte 0xe9 (column 4) is not UTF-8; expected ")


def test_an_output_path_of_the_wrong_kind_is_one_line_naming_it(tmp_path):
    folder, file = tmp_path / "folder", tmp_path / "file"
    folder.mkdir()
    file.write_text("kept")
    with pytest.raises(InputError, match=f"^--output_dir={file}: is a file; expected a folder$"):
        check_writable_folder(str(file), "--output_dir")
    with pytest.raises(InputError, match=f"^--output_dir: cannot write in {file}/run "):
        check_writable_folder(str(file / "run"), "--output_dir")
    with pytest.raises(InputError, match=f"^--output_file={folder}: is a folder; expected the "):
        check_output_file(str(folder), "--output_file")
    with pytest.raises(InputError, match=f"^{folder}: is a folder; expected the path of a file"):
        atomic_write_text(folder, "text")
    assert file.read_text() == "kept" and list(folder.iterdir()) == []


def test_reading_the_umask_never_sets_it_not_even_for_a_moment(monkeypatch):
    # os.umask(0) to read it would, for that moment, make every thread's new files
    # world-writable.
    from bert_tf.io import fileio

    current = os.umask(0o022)
    os.umask(current)
    calls = []
    monkeypatch.setattr(os, "umask", lambda mask: calls.append(mask) or current)
    assert fileio.umask() == current
    assert calls == []


# --- Telling a binary file from text ---------------------------------------------------------


def _gzip() -> bytes:
    return gzip.compress(SAMPLE_TEXT.encode("utf-8"), mtime=0)


def _zip() -> bytes:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("sample_text.txt", SAMPLE_TEXT)
    return archive.getvalue()


def _tfrecord(tmp_path) -> bytes:
    path = str(tmp_path / "records.tfrecord")
    padded = [2, 1996, 3899, 2003, 3] + [0] * 123  # as create_pretraining_data writes them
    write_records(path, [encode_example({"input_ids": padded, "input_mask": padded}, {})] * 20)
    with open(path, "rb") as f:
        return f.read()


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = b"".join(b"\0" + bytes((x * 16 + y) % 256 for x in range(48)) for y in range(16))
    header = struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0)  # 16x16 RGB
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )  # fmt: skip


BINARY_FILES = {
    "gzip": lambda tmp_path: _gzip(),
    "zip": lambda tmp_path: _zip(),
    "TFRecord": _tfrecord,
    "PNG": lambda tmp_path: _png(),
}


def read_as_text(path) -> list[str]:
    """What the text readers make of a file: the corpus reader's lines, the whole-file decoder's
    lines, extract_features' examples and read_text's lines, which must all agree."""
    from bert_tf.extraction.features import read_examples

    lines = list(read_lines(path))
    with open(path, "rb") as f:
        assert re.findall("[^\n]*\n|[^\n]+$", decode_utf8(f.read(), path)) == lines
    assert [e.text_a for e in read_examples(str(path))] == [line.strip() for line in lines]
    return lines


def test_text_with_a_stray_nul_is_read_as_the_original_reads_it(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"ab\x00cd\n" + SAMPLE_TEXT.encode("utf-8"))
    lines = read_as_text(path)
    assert lines[0] == "ab\x00cd\n"
    assert read_text(path, "a GLUE file").startswith("ab\x00cd\n")
    # The original's tokenizer drops the NUL (BasicTokenizer._clean_text).
    tokenizer = FullTokenizer(SAMPLE_DATA / "vocab.txt")
    assert tokenizer.tokenize(lines[0]) == tokenizer.tokenize("abcd") == ["abc", "##d"]


def test_a_tiny_text_with_a_stray_nul_is_read(tmp_path):
    path = tmp_path / "tiny.txt"
    path.write_bytes(b"ab\x00cd")  # one byte in five, but a single one
    assert read_as_text(path) == ["ab\x00cd"]


def test_stray_control_characters_in_utf8_text_are_read(tmp_path):
    path = tmp_path / "corpus.txt"
    strays = "\x00\x01\x02\x1f\x7f"  # more than a tiny file's few, a sliver of this one
    lines = SAMPLE_TEXT.split("\n")
    strayed = [s + line for s, line in zip(strays, lines[: len(strays)], strict=True)]
    text = "\n".join(strayed + lines[len(strays) :])
    path.write_bytes(text.encode("utf-8"))
    assert "".join(read_as_text(path)) == text


def test_terminal_escapes_and_backspaces_are_text(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(b"\x1b[31mERROR\x1b[0m disk full\n" * 300 + b"N\bNA\bAM\bME\bE\n" * 100)
    assert len(read_as_text(path)) == 400


def test_a_text_in_an_8_bit_code_page_is_read_with_its_other_bytes_dropped(tmp_path, caplog):
    # Almost every byte of Russian cp1251 is not UTF-8; the original reads it all the same.
    path = tmp_path / "cp1251.txt"
    path.write_bytes("Москва - столица России.\n".encode("cp1251") * 400)
    with caplog.at_level(logging.WARNING):
        lines = list(read_lines(path))
    assert lines == [" -  .\n"] * 400
    assert f"{path}: 7600 byte(s) that are not UTF-8 were dropped" in caplog.text


@pytest.mark.parametrize("kind", sorted(BINARY_FILES))
@pytest.mark.parametrize("reader", ["corpus", "extract_features", "decode_utf8", "read_text"])
def test_a_binary_file_is_refused_as_binary_in_one_line(kind, reader, tmp_path):
    path = tmp_path / "data"
    path.write_bytes(BINARY_FILES[kind](tmp_path))
    with pytest.raises(InputError) as error:
        read_with(reader, path)
    message = str(error.value)
    assert re.match(f"{path}:[0-9]+: (a NUL byte|control character 0x..), as in a binary file; "
                    "expected [^\n]+$", message)  # fmt: skip


def test_a_gzip_archive_is_refused_as_binary(tmp_path):
    path = tmp_path / "corpus.txt.gz"
    path.write_bytes(_gzip())
    with pytest.raises(InputError, match=f"^{path}:1: a NUL byte, as in a binary file; expected "):
        list(read_lines(path))


def test_control_characters_without_a_nul_are_named_by_their_code(tmp_path):
    path = tmp_path / "data"
    path.write_bytes(b"text\n" + bytes([0x01, 0x02, 0x03, 0x1F, 0x7F]) * 10)
    with pytest.raises(InputError, match=f"^{path}:2: control character 0x01, as in a binary "):
        list(read_lines(path))


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("bom", ["with a byte-order mark", "without one"])
@pytest.mark.parametrize("reader", ["corpus", "extract_features", "decode_utf8", "read_text"])
def test_utf16_text_is_refused_as_utf16_in_one_line(encoding, bom, reader, tmp_path):
    path = tmp_path / "data"
    text = ("\ufeff" if bom.startswith("with ") else "") + SAMPLE_TEXT
    path.write_bytes(text.encode(encoding))
    with pytest.raises(InputError) as error:
        read_with(reader, path)
    assert str(error.value).startswith(f"{path}:1: UTF-16 text (")
    assert "\n" not in str(error.value) and " in UTF-8" in str(error.value)


def test_utf16_cjk_text_is_refused_by_its_byte_order_mark(tmp_path):
    # No NUL at every other byte in Chinese UTF-16: the mark tells it.
    path = tmp_path / "data"
    path.write_bytes("\ufeff北京是中华人民共和国的首都。\n".encode("utf-16-le") * 100)
    with pytest.raises(InputError, match=f"^{path}:1: UTF-16 text \\(a byte-order mark"):
        list(read_lines(path))


def read_with(reader: str, path):
    from bert_tf.extraction.features import read_examples

    if reader == "corpus":
        return list(read_lines(path))
    if reader == "extract_features":
        return read_examples(str(path))
    if reader == "decode_utf8":
        return decode_utf8(path.read_bytes(), path)
    return read_text(path, "a GLUE file")
