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

from minigpt import guarded, processes
from minigpt.errors import RunBusyError, RunError
from minigpt.processes import cmdline as process_cmdline
from minigpt.processes import start_time as process_start_time

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


def holds_lock(run_dir: Path | str, pid: int) -> bool | None:
    """Whether process ``pid`` has this run's lock file open, the proof that it is the run's trainer
    (a status file names any pid; the kernel's table of open files does not lie). With /proc the open
    file itself is compared, by device and inode; elsewhere the paths psutil lists for it, which a
    rename of the lock file would fool (``processes.PROVEN_BY`` says which). None where the system
    cannot tell (another user's process, or open files not listed here)."""
    try:
        st = (Path(run_dir) / LOCK_FILE).stat()
    except OSError:
        return False
    ids = processes.open_file_ids(pid)
    return None if ids is None else (st.st_dev, st.st_ino) in ids


def proof_limit() -> str:
    """What the stop proof cannot see on this system, for a refusal's message ("" with /proc)."""
    if processes.HAS_PROC:
        return ""
    return (f"this system has no /proc: the open lock file is matched by its path in {processes.PROVEN_BY}, "
            f"and a process whose open files are hidden counts only if the lock records its pid")


def _trainer_command(argv: list[str]) -> bool:
    """``minigpt train …``, ``python -m minigpt.cli train …`` (a worker, a torchrun rank)."""
    return "train" in argv and any("minigpt" in part for part in argv)


def _names_folder(pid: int, argv: list[str], run_dir: Path) -> bool:
    """The command line names this run folder (``--out RUN``, ``--resume RUN``, ``RUN/config.json``)."""
    cwd = processes.cwd(pid)
    if cwd is None:
        return False
    want = run_dir.resolve()
    return any(Path(cwd, part) in (want, want / "config.json") for part in argv)


def proven_trainer(run_dir: Path | str, pid: int, launch: dict | None = None) -> bool:
    """Whether ``pid`` is provably the trainer of ``run_dir``: a ``minigpt train`` (its command
    line) that holds the run's lock file open, or, before it takes the lock, the worker recorded in
    ``launch`` (the app's launch record: its start time matches and its command line names this
    folder). A status file may name any pid; nothing is signalled on its word alone."""
    run_dir = Path(run_dir)
    argv = process_cmdline(pid)
    if argv is not None and not _trainer_command(argv):
        return False
    held = holds_lock(run_dir, pid)
    if held and is_locked(run_dir):
        return True
    recorded = (launch or {}).get("pid_start")
    if ((launch or {}).get("pid") == pid and isinstance(recorded, int) and not isinstance(recorded, bool)
            and process_start_time(pid) == recorded and argv is not None and _names_folder(pid, argv, run_dir)):
        return True
    # The system cannot tell which files it holds: the lock's own record, written by whoever holds the lock.
    return held is None and is_locked(run_dir) and lock_holder(run_dir) == pid
