"""Writing files so that nothing half-written ever looks complete, and reading the text files
users give.

Every output goes to a temporary name in the same directory and is renamed into place once it is
whole: a crash leaves a `*.tmp-*` file behind, never a truncated result under the real name. A
URL (gs://) is written the same way through `bert_tf.io.filesystem`; there the rename is the store's
copy-then-delete, so the final name still appears only whole (docs/RELIABILITY.md).
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import io
import logging
import os
import re
import socket
import tempfile
from collections.abc import Iterator
from typing import IO

from bert_tf.errors import InputError
from bert_tf.io import filesystem
from bert_tf.options import Options, option, options

logger = logging.getLogger(__name__)


@options
class TextInputOptions(Options):
    """How the text files a script reads are decoded (`decode_utf8`)."""

    strict_utf8: bool = option(
        False,
        "Stop at bytes that are not UTF-8 instead of dropping them (dropped bytes are counted "
        "in a warning per file).",
    )


def umask() -> int:
    """The process's file-creation mask, read without changing it: `os.umask` can only be read
    by setting it, which for that moment would hold for every thread's new files."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii") as f:  # Linux 4.7+
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    # Elsewhere: what the mask leaves of a new folder's mode 0777.
    with tempfile.TemporaryDirectory() as parent:
        probe = os.path.join(parent, "probe")
        os.mkdir(probe, 0o777)
        return 0o777 & ~os.stat(probe).st_mode


def usual_permissions(path: str) -> None:
    """Gives `path` the permissions open() or mkdir would have (what the user's umask allows):
    tempfile's folders and files, and some libraries' outputs, are private to their owner."""
    os.chmod(path, (0o777 if os.path.isdir(path) else 0o666) & ~umask())


# What a full, read-only or forbidden output folder raises: the user's to fix, not a bug.
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})


def cannot_write(path: str, error: OSError) -> InputError:
    """The one line for a write that the disk refused: the path and the reason."""
    return InputError(f"{path}: cannot write ({error.strerror}); nothing was left under that name")


def check_writable_folder(folder: str, flag: str) -> None:
    """Raises `InputError` naming `flag` when files cannot be created in `folder` (made if
    missing): a full or read-only disk found before the work, not after it.

    Only local folders are checked (a remote one, e.g. gs://, reports its own errors).
    """
    if "://" in folder:
        return
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise InputError(f"{flag}={folder}: is a file; expected a folder")
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        # ENOTDIR, EEXIST: a file where the path needs a folder (FILE/sub).
        if e.errno not in DISK_ERRNOS | {errno.ENOTDIR, errno.EEXIST}:
            raise
        raise InputError(f"{flag}: cannot write in {folder} ({e.strerror})") from None


def check_output_file(path: str, flag: str) -> None:
    """Raises `InputError` naming `flag` unless a file can be written at `path`: not a folder,
    in a folder that is one and takes files (made if missing)."""
    if "://" in path:
        return
    if os.path.isdir(path):
        raise InputError(f"{flag}={path}: is a folder; expected the path of a file to write")
    check_writable_folder(os.path.dirname(path) or ".", flag)


def temporary_prefix(path: str) -> str:
    """`PATH.tmp-HOST-PID-`: the start of the names a file is written under before its rename;
    the host and process tell a file still being written from one a killed run left, in a
    bucket that several machines write to as on a local disk."""
    return f"{path}.tmp-{socket.gethostname()}-{os.getpid()}-"


def remove_stale_temporaries(path: str) -> None:
    """Removes the `PATH.tmp-HOST-PID-*` files (or folders) that processes of this machine
    left when killed while they wrote `path`, on a local disk or at a URL alike, saying so in a
    line each (another machine's may still be at work: they stay)."""
    for stale in filesystem.glob(filesystem.escape(path) + ".tmp-*"):
        *host, pid, _ = ["", *stale[len(path) + len(".tmp-") :].rsplit("-", 2)][-3:]
        if host in ([""], [socket.gethostname()]) and pid.isdigit() and not _running(int(pid)):
            filesystem.discard(stale)
            logger.warning("removed %s, left by an interrupted run", stale)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """Opens a temporary file beside `path`; renames it to `path` only if the block succeeds.

    Temporary files that killed runs left beside `path` are removed first. A full, read-only or
    forbidden folder raises `InputError` naming `path`.
    """
    path = os.fspath(path)
    if filesystem.is_url(path):
        with _atomic_open_url(path, mode) as f:
            yield f
        return
    directory = os.path.dirname(path) or "."
    if os.path.isdir(path):  # os.replace would put the file in its place, or fail late
        raise InputError(f"{path}: is a folder; expected the path of a file to write")
    tmp_path = None
    try:
        os.makedirs(directory, exist_ok=True)
        remove_stale_temporaries(path)
        prefix = os.path.basename(temporary_prefix(path))
        fd, tmp_path = tempfile.mkstemp(dir=directory, prefix=prefix)
        os.close(fd)
        usual_permissions(tmp_path)  # mkstemp makes it private (0600)
        encoding = None if "b" in mode else "utf-8"
        with open(tmp_path, mode, encoding=encoding) as f:
            yield f
        os.replace(tmp_path, path)
    except BaseException as e:
        if tmp_path:
            with contextlib.suppress(FileNotFoundError):
                os.remove(tmp_path)
        # Only the disk's refusals of this file (a write error names no file); an error
        # reading another file inside the block is that file's.
        if (
            isinstance(e, OSError)
            and e.errno in DISK_ERRNOS | {errno.ENOTDIR, errno.EEXIST}
            and e.filename in (None, path, tmp_path, directory)
        ):
            raise cannot_write(path, e) from None
        raise


@contextlib.contextmanager
def _atomic_open_url(path: str, mode: str) -> Iterator[IO]:
    """`atomic_open` on a URL's file system: a temporary name, then the store's rename."""
    if filesystem.isdir(path):
        raise InputError(f"{path}: is a folder; expected the path of a file to write")
    filesystem.makedirs(os.path.dirname(path))
    remove_stale_temporaries(path)
    tmp_path = temporary_prefix(path) + os.urandom(4).hex()
    try:
        with filesystem.open_file(tmp_path, mode) as f:
            yield f
        filesystem.rename(tmp_path, path)
    except BaseException:
        filesystem.discard(tmp_path)
        raise


@contextlib.contextmanager
def staging_folder(target: str) -> Iterator[str]:
    """A new, empty folder beside `target` (`TARGET.tmp-PID-*`) for the block to fill and move
    into place (`filesystem.rename`); removed at the end if it is still there (the block
    failed, or moved only a copy of it)."""
    parent = os.path.dirname(target.rstrip("/")) or "."
    filesystem.makedirs(parent)
    remove_stale_temporaries(target.rstrip("/"))
    if filesystem.is_url(target):
        staging = temporary_prefix(target.rstrip("/")) + os.urandom(4).hex()
        filesystem.makedirs(staging)
    else:
        prefix = os.path.basename(temporary_prefix(target.rstrip("/")))
        staging = tempfile.mkdtemp(dir=parent, prefix=prefix)
        usual_permissions(staging)  # mkdtemp makes it private (0700)
    try:
        yield staging
    finally:
        filesystem.rmtree(staging)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_open(path) as f:
        f.write(text)


def read_text(path: str | os.PathLike, expected: str) -> str:
    """The text of a UTF-8 file a user gives whole (a task's data, a config), a byte-order mark
    dropped. Raises `InputError` naming the file, the line and `expected` (what the file should
    be) for a binary file or for bytes that are not UTF-8, where Python would raise a
    UnicodeDecodeError from deep inside the reader."""
    with filesystem.open_file(path, "rb") as f:
        data = f.read()
    refuse_binary(data, path, expected)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - data.rfind(b"\n", 0, e.start)
        raise InputError(
            f"{os.fspath(path)}:{line}: byte 0x{data[e.start]:02x} (column {column}) is not "
            f"UTF-8; expected {expected}, UTF-8 text"
        ) from None


# The head of a file that tells binary from text: 8,000 bytes, as git reads. A stray NUL or
# control character anywhere is text's, as in the original, whose tokenizer drops it.
BINARY_HEAD = 8000

# Control characters, which text holds only as strays; BEL, BS, TAB, LF, VT, FF, CR and ESC are
# text, as for file(1) (terminal logs, nroff's overstrike).
_CONTROLS = bytes(sorted(set(range(0x20)) - {7, 8, 9, 10, 11, 12, 13, 27} | {0x7F}))
_CONTROL = re.compile(b"[" + re.escape(_CONTROLS) + b"]")

# Binary when 1 in 32 head bytes or more (and 4 or more) are controls. Measured: binaries 5.9%
# (a gzip of 100 bytes of text) to 55% (a TFRecord), UTF-16 text 50%; text 0% (86 books) to 0.02%
# (with a stray NUL). Bytes that are not UTF-8 tell nothing: 42% of a gzip's, 87% of cp1251's.
_BINARY_SHARE = 1 / 32
_BINARY_LEAST = 4

# Longest first: UTF-32-LE's mark begins with UTF-16-LE's.
_BYTE_ORDER_MARKS = {
    codecs.BOM_UTF32_LE: "UTF-32",
    codecs.BOM_UTF32_BE: "UTF-32",
    codecs.BOM_UTF16_LE: "UTF-16",
    codecs.BOM_UTF16_BE: "UTF-16",
}


def refuse_binary(data: bytes, path: str | os.PathLike, expected: str) -> None:
    """Raises `InputError` naming the file, the line and `expected` when `data` (a file's bytes,
    of which the first BINARY_HEAD are looked at) is not text: UTF-16 or UTF-32 text, or a
    binary file (an archive, a TFRecord, an image) given for a text one."""
    head = data[:BINARY_HEAD]
    for mark, encoding in _BYTE_ORDER_MARKS.items():
        if head.startswith(mark):
            raise InputError(
                f"{os.fspath(path)}:1: {encoding} text (a byte-order mark 0x{mark.hex()}); "
                f"expected {expected} in UTF-8"
            )
    controls = len(head) - len(head.translate(None, _CONTROLS))
    if controls < max(_BINARY_LEAST, _BINARY_SHARE * len(head)):
        return
    even, odd = head[0::2].count(0), head[1::2].count(0)
    if max(even, odd) > len(head) // 4 and min(even, odd) < max(even, odd) // 8:
        raise InputError(
            f"{os.fspath(path)}:1: UTF-16 text (a NUL byte at every other position); expected "
            f"{expected} in UTF-8"
        )
    nul = head.find(b"\0")
    first = nul if nul >= 0 else _CONTROL.search(head).start()
    found = "a NUL byte" if nul >= 0 else f"control character 0x{head[first]:02x}"
    line = head.count(b"\n", 0, first) + 1
    raise InputError(f"{os.fspath(path)}:{line}: {found}, as in a binary file; expected {expected}")


def text_lines(f: IO[bytes], path: str | os.PathLike, expected: str) -> Iterator[bytes]:
    """The lines of a file open for reading bytes, each ending in its "\\n", once `refuse_binary`
    has found the file's head to be text."""
    head = f.read(BINARY_HEAD)
    refuse_binary(head, path, expected)
    # The head's last line, cut at BINARY_HEAD, is completed from the file.
    yield from io.BytesIO(head + f.readline())
    yield from f


def read_lines(path: str | os.PathLike, strict_utf8: bool = False) -> Iterator[str]:
    """Yields the lines of a text file as the original's `tf.gfile.GFile.readline` loop saw them.

    As TensorFlow's reader: only "\\n" ends a line (kept at the end of each line) and every "\\r"
    is dropped, even inside a line. Bytes that are not UTF-8 are dropped, as the original's
    `convert_to_unicode(..., errors="ignore")` intends, and counted in a warning at the end of
    the file; `strict_utf8` makes them an `InputError` naming the file and line instead. A
    file that is not text (`refuse_binary`) is an `InputError` in any case.
    """
    dropped = 0
    with filesystem.open_file(path, "rb") as f:
        for number, raw in enumerate(text_lines(f, path, "text"), start=1):
            raw = raw.replace(b"\r", b"")
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("utf-8", "ignore")
                count = len(raw) - len(text.encode("utf-8"))
                if strict_utf8:
                    raise InputError(
                        f"{os.fspath(path)}:{number}: {count} byte(s) that are not UTF-8; "
                        "expected UTF-8 text"
                    ) from None
                dropped += count
                yield text
    warn_of_dropped_bytes(path, dropped)


def decode_utf8(data: bytes, path: str | os.PathLike, strict_utf8: bool = False) -> str:
    """A whole file's bytes as text, as `read_lines` decodes each line."""
    refuse_binary(data, path, "text")
    text = data.decode("utf-8", "ignore")
    dropped = len(data) - len(text.encode("utf-8"))
    if dropped and strict_utf8:
        raise InputError(f"{os.fspath(path)}: {dropped} byte(s) that are not UTF-8; expected UTF-8")
    warn_of_dropped_bytes(path, dropped)
    return text


def warn_of_dropped_bytes(path: str | os.PathLike, dropped: int) -> None:
    if dropped:
        logger.warning(
            "%s: %d byte(s) that are not UTF-8 were dropped, as the original does (a latin-1 "
            "'Caf\\xe9' reads as 'Caf'); the data scripts' --strict_utf8 makes this an error",
            os.fspath(path),
            dropped,
        )
