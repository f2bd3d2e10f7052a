"""Outputs appear whole or not at all, with ordinary permissions."""

from __future__ import annotations

import os
import stat

import pytest

from bert_tf.fileio import atomic_open, atomic_write_text


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
