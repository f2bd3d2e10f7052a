"""Writing files so that nothing half-written ever looks complete.

Every output goes to a temporary name in the same directory and is renamed into place once it is
whole: a crash leaves a `*.tmp-*` file behind, never a truncated result under the real name.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import IO


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """Opens a temporary file beside `path`; renames it to `path` only if the block succeeds."""
    path = os.fspath(path)
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp_path = tempfile.mkstemp(dir=directory, prefix=os.path.basename(path) + ".tmp-")
    os.close(fd)
    # mkstemp makes the file private (0600); give it the permissions open() would.
    os.chmod(tmp_path, 0o666 & ~_umask())
    try:
        encoding = None if "b" in mode else "utf-8"
        with open(tmp_path, mode, encoding=encoding) as f:
            yield f
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp_path)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_open(path) as f:
        f.write(text)


def read_lines(path: str | os.PathLike) -> Iterator[str]:
    """Yields the lines of a text file as the original's `tf.gfile.GFile.readline` loop saw them.

    As TensorFlow's reader: only "\\n" ends a line (kept at the end of each line) and every "\\r"
    is dropped, even inside a line. Bytes that are not UTF-8 are dropped, as the original's
    `convert_to_unicode(..., errors="ignore")` intends.
    """
    with open(path, "rb") as f:
        for raw in f:
            yield raw.replace(b"\r", b"").decode("utf-8", "ignore")
