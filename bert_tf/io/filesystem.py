"""Every path bert_tf reads or writes may be a local path or a URL (gs://, hdfs://, s3://, and
ram://, TensorFlow's in-process file system that the tests use), as the original's `tf.gfile`.

Local paths go through `os` and `open`: no TensorFlow import (the tokenizer, the data
generator and the backend-agnostic model stay TensorFlow-free) and the local guarantees of
fileio.py (umask permissions, an atomic rename). URLs go through `tf.io.gfile`, TensorFlow
imported only then. This module is the one place that touches files: everything else calls it
or fileio.py, which builds on it.
"""

from __future__ import annotations

import contextlib
import glob as _glob
import os
import shutil
from typing import IO


def is_url(path: str | os.PathLike) -> bool:
    """`scheme://...`: a path that only TensorFlow's file systems serve."""
    return "://" in os.fspath(path)


def _gfile():
    import tensorflow as tf  # only for URLs: local paths need no TensorFlow

    return tf.io.gfile


def _not_found() -> type[Exception]:
    import tensorflow as tf

    return tf.errors.NotFoundError


def open_file(path: str | os.PathLike, mode: str = "r", encoding: str | None = "utf-8") -> IO:
    """`open` for a local path, `tf.io.gfile.GFile` (which reads and writes text as UTF-8)
    for a URL. Binary modes take no encoding."""
    path = os.fspath(path)
    if is_url(path):
        return _gfile().GFile(path, mode)
    return open(path, mode, encoding=None if "b" in mode else encoding)  # noqa: SIM115


def exists(path: str | os.PathLike) -> bool:
    return isfile(path) or isdir(path) if is_url(path) else os.path.lexists(path)


def isfile(path: str | os.PathLike) -> bool:
    if is_url(path):
        gfile, path = _gfile(), os.fspath(path)
        return gfile.exists(path) and not gfile.stat(path).is_directory
    return os.path.isfile(path)


def isdir(path: str | os.PathLike) -> bool:
    """Some file systems take any prefix of a file's name for a folder (ram://d/m.ckpt, where
    ram://d/m.ckpt.index is a file): a URL is a folder only if something is in it, or nothing
    at all starts with its name (a folder made empty)."""
    if not is_url(path):
        return os.path.isdir(path)
    gfile, path = _gfile(), os.fspath(path)
    return gfile.isdir(path) and (bool(_children(path)) or not gfile.listdir(path))


def _children(url: str) -> list[str]:
    """The paths in the folder `url`: a glob, which every file system answers exactly (listdir
    of ram://d/a also lists the ".b" of ram://d/a.b)."""
    return _gfile().glob(_glob.escape(url.rstrip("/")) + "/*")


def makedirs(path: str | os.PathLike) -> None:
    """Makes `path` and its parents; nothing if it is a folder already."""
    if is_url(path):
        _gfile().makedirs(os.fspath(path))
    else:
        os.makedirs(path, exist_ok=True)


def listdir(path: str | os.PathLike) -> list[str]:
    """The names in the folder `path` (a URL's folders without their trailing "/")."""
    if is_url(path):
        return [os.path.basename(child.rstrip("/")) for child in _children(os.fspath(path))]
    return os.listdir(path)


def glob(pattern: str) -> list[str]:
    """The paths that match `pattern` (`*`, `?`, `[...]`), sorted."""
    return sorted(_gfile().glob(pattern) if is_url(pattern) else _glob.glob(pattern))


def escape(path: str) -> str:
    """`path` with its glob characters escaped, to match it literally (a URL's scheme too)."""
    return _glob.escape(path)


def getsize(path: str | os.PathLike) -> int:
    return _gfile().stat(os.fspath(path)).length if is_url(path) else os.path.getsize(path)


def remove(path: str | os.PathLike) -> None:
    """Removes the file `path`; raises FileNotFoundError when there is none."""
    if not is_url(path):
        os.remove(path)
    elif not _gfile().exists(os.fspath(path)):
        raise FileNotFoundError(2, "No such file", os.fspath(path))
    else:
        _gfile().remove(os.fspath(path))


def rmtree(path: str | os.PathLike) -> None:
    """Removes the folder `path` and all in it; nothing if there is none."""
    if is_url(path):
        with contextlib.suppress(_not_found()):
            _gfile().rmtree(os.fspath(path))
    else:
        shutil.rmtree(path, ignore_errors=True)


def discard(path: str | os.PathLike) -> None:
    """Removes the file or folder `path` where it can, quietly: cleanup after a failure, which
    must not hide that failure (an OSError locally, a TensorFlow error at a URL)."""
    with contextlib.suppress(Exception):
        (rmtree if isdir(path) else remove)(path)


def rename(source: str, target: str, last: tuple[str, ...] = ()) -> None:
    """Renames the file or folder `source` to `target`, replacing a file there. Local:
    `os.replace`, atomic. A URL: a file by the file system's rename, which on object stores
    (gs://) is a copy then a delete (the target appears only whole); a folder is copied file by
    file, its files named in `last` (those readers take as the sign of a whole folder) last,
    then removed: the folder is whole once they are there."""
    if not (is_url(source) or is_url(target)):
        os.replace(source, target)
    elif isdir(source):
        copytree(source, target, last)
        rmtree(source)
    else:
        _gfile().rename(source, target, overwrite=True)


def copy(source: str, target: str) -> None:
    """Copies the file `source` to `target` (either may be a URL), replacing a file there."""
    if is_url(source) or is_url(target):
        _gfile().copy(source, target, overwrite=True)
    else:
        shutil.copyfile(source, target)


def copytree(source: str, target: str, last: tuple[str, ...] = ()) -> None:
    """Copies the folder `source` with all in it to `target` (made; either may be a URL), the
    files named in `last` (in `source` itself) after all others."""
    makedirs(target)
    names = sorted(listdir(source), key=lambda name: name in last)
    for name in names:
        from_path, to_path = os.path.join(source, name), os.path.join(target, name)
        if isfile(from_path):
            copy(from_path, to_path)
        else:
            copytree(from_path, to_path)


def absolute(path: str) -> str:
    """`os.path.abspath` for a local path; a URL as it is."""
    return path if is_url(path) else os.path.abspath(path)


def folder_of(path: str) -> str:
    """The folder `path` names, or the folder of the file (a checkpoint prefix) it names."""
    return path if isdir(path) else os.path.dirname(path) or "."
