"""Outputs appear whole or not at all, with ordinary permissions."""

from __future__ import annotations

import errno
import io
import logging
import os
import stat
import subprocess
import sys

import pytest

from bert_tf.errors import InputError
from bert_tf.fileio import (
    atomic_open,
    atomic_write_text,
    check_output_file,
    check_writable_folder,
    read_lines,
)


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
    from bert_tf.extract_features import read_examples
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
    from bert_tf import fileio

    current = os.umask(0o022)
    os.umask(current)
    calls = []
    monkeypatch.setattr(os, "umask", lambda mask: calls.append(mask) or current)
    assert fileio.umask() == current
    assert calls == []
