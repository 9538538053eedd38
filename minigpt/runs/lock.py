"""One trainer per run folder: an advisory lock on ``trainer.lock`` that dies with its process.

``fcntl.flock`` is held by the open file, so the kernel drops it when the trainer exits in any
way (kill -9 included): there is never a stale lock to clean up. The file also records the
holder's pid, for the message that refuses a second trainer. On a platform without ``fcntl``
(Windows) the lock is not taken and the app's own check (a live worker's pid) is all there is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from minigpt import guarded
from minigpt.errors import RunBusyError, RunError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

LOCK_FILE = "trainer.lock"


class RunLock:
    """Held while a trainer writes a run folder; ``release`` (or the process's exit) frees it."""

    def __init__(self, run_dir: Path | str):
        self.path = Path(run_dir) / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        """Take the lock or raise RunBusyError naming the process that holds it."""
        if fcntl is None:
            return self
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o644)  # a FIFO: no wait
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise RunError(f"{self.path}: not a regular file (a pipe or a device); remove it to train this run")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            holder = lock_holder(self.path.parent)
            who = f" (pid {holder})" if holder else ""
            raise RunBusyError(f"{self.path.parent.name}: another process is training this run{who}; "
                               f"stop it first (minigpt stop {self.path.parent.name})") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the file drops the lock
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> bool:
        self.release()
        return False


def is_locked(run_dir: Path | str) -> bool:
    """Whether a live process holds the run's lock (tested by trying to take it, never waiting)."""
    if fcntl is None:
        return False
    try:
        fd = os.open(Path(run_dir) / LOCK_FILE, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens at once
    except OSError:
        return False
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # no trainer locks anything but its own file
        os.close(fd)
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # also drops the shared lock taken by the test
    return False


def lock_holder(run_dir: Path | str) -> int | None:
    """The pid written by the process that last took the lock (None when unknown)."""
    try:
        text = guarded.read_text(Path(run_dir) / LOCK_FILE, guarded.KIB).strip()
        return int(text) if text else None
    except (OSError, ValueError):  # UnicodeDecodeError and UnsafeFileError too
        return None
