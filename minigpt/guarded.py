"""The one way the tutor opens a file a user can reach (a regular file, of bounded size, opened
without ever blocking), and the one way a write says the disk is full.

Any path in a run folder, a checkpoint, an experiment, a deck or a dataset may be something else
than the file it is named for. Opening a FIFO for reading waits for a writer forever; reading
``/dev/zero`` never ends; a 20 GB ``status.json`` fills memory. So every reader opens through
:func:`open_file`: the path is opened with ``O_NONBLOCK`` (a FIFO opens at once instead of
waiting), checked with ``fstat`` on the open descriptor (no race with a swap of the path), and
refused unless it is a regular file no larger than the reader's own limit. Reads stop at the
limit even if the file grows meanwhile.

The refusal is an :class:`~minigpt.errors.UnsafeFileError`, a ``TutorError`` that is also an
``OSError``: a reader that already turns "cannot read" into its own error (a damaged checkpoint,
a broken run) does so for these too, with ``e.strerror`` saying why.

A write that runs out of room (``ENOSPC``, a quota) inside :func:`disk_full_guard` becomes one
:class:`~minigpt.errors.DiskFullError` that names what was not written and what stays intact:
the run writer, the checkpoint writer and the exports use it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import typing
from pathlib import Path
from typing import BinaryIO

from minigpt.errors import DiskFullError, UnsafeFileError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows, which has no FIFOs to wait on
    fcntl = None

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30

# The limits, one per kind of file (docs/reliability.md lists them).
SMALL_JSON_BYTES = 1 * MIB  # status.json, launch.json, stop requests, experiment records
CHECKPOINT_JSON_BYTES = 16 * MIB  # a checkpoint's config.json: a vocabulary and a few settings
WEIGHTS_BYTES = 2 * GIB  # a safetensors file: 50M parameters in float64 with an optimizer's moments
METRICS_BYTES = 1 * GIB  # metrics.jsonl: ten million log lines
TEXT_FILE_BYTES = 16 * MIB  # a deck, a lesson, an experiment spec, a card file, a log's tail
DATASET_BYTES = 1 * GIB  # a dataset: far beyond what the tutor's models learn from on a laptop


def special_kind(mode: int) -> str:
    """What a file that is not a regular file or a folder is, for a message: "a pipe (FIFO)"."""
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def size_text(n: int) -> str:
    """A byte count for a message: 16 MiB, 1 GiB, 512 KiB."""
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if n >= unit:
            value = n / unit
            return f"{value:,.0f} {name}" if value >= 10 or value.is_integer() else f"{value:.1f} {name}"
    return f"{n} bytes"


def open_file(path: Path | str, limit: int) -> BinaryIO:
    """``path`` opened for reading in binary, once checked: a regular file of at most ``limit``
    bytes. ``IsADirectoryError`` for a folder, ``FileNotFoundError`` as ``open`` raises it,
    ``UnsafeFileError`` for a pipe, a device or a file over the limit."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "is a folder, not a file", str(path))
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFileError(path, f"{special_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise UnsafeFileError(path, f"{size_text(info.st_size)}, larger than the {size_text(limit)} "
                                        f"this file may hold", too_large=True)
        if fcntl is not None:  # (a regular file ignores the flag; cleared all the same)
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def open_append(path: Path | str, text: bool = True):
    """``path`` opened to append (created if missing), never waiting: a pipe or a device there
    is refused with ``UnsafeFileError`` (a FIFO with no reader would block the opener forever)."""
    path = Path(path)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        if e.errno == errno.ENXIO:  # a FIFO nobody reads: O_NONBLOCK makes the open fail at once
            raise UnsafeFileError(path, "a pipe (FIFO), not a regular file") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafeFileError(path, f"{special_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "a", encoding="utf-8") if text else os.fdopen(fd, "ab")
    except BaseException:
        os.close(fd)
        raise


def check_file(path: Path | str, limit: int) -> None:
    """Refuse ``path`` as :func:`open_file` would, without reading it."""
    with open_file(path, limit):
        pass


def read_bytes(path: Path | str, limit: int, offset: int = 0) -> bytes:
    """The bytes of ``path`` from ``offset`` (at most ``limit`` bytes in all, even if it grows)."""
    with open_file(path, limit) as f:
        if offset:
            f.seek(offset)
        data = f.read(max(0, limit - offset) + 1)
    if offset + len(data) > limit:
        raise UnsafeFileError(path, f"grew larger than the {size_text(limit)} this file may hold while read",
                              too_large=True)
    return data


def read_text(path: Path | str, limit: int, errors: str = "strict") -> str:
    """The UTF-8 text of ``path`` (``UnicodeDecodeError`` as ``Path.read_text`` raises it)."""
    return read_bytes(path, limit).decode("utf-8", errors)


def read_tail(path: Path | str, tail: int) -> bytes:
    """The last ``tail`` bytes of ``path`` (a log, which may be long: only its end is read)."""
    with open_file(path, 1 << 62) as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - tail))
        return f.read(tail)


def is_regular(path: Path | str) -> bool:
    """Whether ``path`` is a regular file now (never opens it)."""
    with contextlib.suppress(OSError):
        return stat.S_ISREG(os.stat(path).st_mode)
    return False


# ---------------------------------------------------------------------------- a full disk

DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def is_disk_full(e: BaseException) -> bool:
    """Whether ``e`` is a write that ran out of room (also through safetensors, which words it)."""
    if isinstance(e, DiskFullError) or (isinstance(e, OSError) and e.errno in DISK_FULL_ERRNOS):
        return True
    text = str(e).lower()
    return "no space left" in text or "quota exceeded" in text or "file too large" in text


@contextlib.contextmanager
def disk_full_guard(what: str, kept: str | typing.Callable[[], str] = ""):
    """Turn "no space left" inside the block into one ``DiskFullError`` naming what could not be
    written (``what``) and what stays intact (``kept``, or a function that says it); any other
    error passes unchanged."""
    try:
        yield
    except DiskFullError:
        raise
    except Exception as e:
        if not is_disk_full(e):
            raise
        kept_text = kept() if callable(kept) else kept
        raise DiskFullError(f"the disk is full: {what} could not be written"
                            + (f"; {kept_text}" if kept_text else "")) from None


def fsync_dir(path: Path | str) -> None:
    """Make a rename in ``path`` durable (a file system without directory fsync renames atomically anyway)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

