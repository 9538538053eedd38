"""What the system says about processes: psutil on every platform (Linux, macOS, Windows), and
``/proc`` only for the three facts psutil cannot prove, all Linux's alone:

- which files a process holds open, by device and inode (the stop proof of ``minigpt.runs.lock``:
  a path can be renamed or replaced, the open file cannot). Elsewhere :func:`open_file_ids` falls
  back to the paths psutil lists, stat-ed now, and says so (``PROVEN_BY``);
- this process's cgroup v2 folder (``minigpt.spawn`` bounds a snippet's tree with one);
- a process's start in clock ticks since boot, read as the kernel wrote it. psutil's create_time is
  boot time plus those ticks, and its boot time is now minus uptime, which moves when the wall clock
  is stepped (NTP on a CI machine moved it 2 s between two calls): a live run's recorded start
  would then no longer match and the run would read as dead.

No other module reads ``/proc`` (``tests/test_processes.py`` greps for it). The machine's own
facts live with their users: CPU counts and load in ``minigpt.training.cpu_policy``, the memory a
run may use in ``minigpt.training.session``, both through psutil.

Torch-free and the library's bottom layer: it imports nothing from minigpt.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import psutil

LINUX = sys.platform.startswith("linux")
# /proc answers for other processes' open files (not only a Linux without /proc mounted, such as
# some containers): the one fact that decides how the lock proof is made.
HAS_PROC = os.path.isdir("/proc/self/fd")
PROVEN_BY = "/proc/PID/fd" if HAS_PROC else "psutil's list of open files"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
GONE = (psutil.Error, ValueError, OverflowError, OSError)  # no such process, not ours to see, bad pid


@dataclass(frozen=True)
class ProcessInfo:
    ppid: int
    pgid: int  # -1 where the platform has no process groups (Windows)
    sid: int
    start: int  # start_time's value
    zombie: bool  # exited, not yet reaped (or dead)


def _stat_ticks(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (after the parenthesised command, which may hold spaces)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _start_value(pid: int, created: float) -> int | None:
    """A process's start as a whole number, fixed for its life. On Linux the clock ticks since boot
    from /proc, the value status files written before psutil recorded (so a run started by an
    earlier version is still recognised); elsewhere hundredths of a second since 1970."""
    if LINUX and HAS_PROC:
        return _stat_ticks(pid)
    if LINUX:  # no /proc mounted: psutil's arithmetic, exact while the clock is not stepped
        return round((created - psutil.boot_time()) * CLOCK_TICKS)
    return round(created * 100)


def start_time(pid: int) -> int | None:
    """The start of ``pid`` (see ``_start_value``), to tell a reused pid apart; None when gone."""
    try:
        return _start_value(pid, psutil.Process(pid).create_time())
    except GONE:
        return None


def cmdline(pid: int) -> list[str] | None:
    """The argv of a live process (None where it cannot be read: gone, another user's, a zombie)."""
    try:
        return psutil.Process(pid).cmdline() or None
    except GONE:
        return None


def cwd(pid: int) -> Path | None:
    """The working folder of a live process (None where it cannot be read)."""
    try:
        return Path(psutil.Process(pid).cwd())
    except GONE:
        return None


def is_zombie(pid: int) -> bool:
    """Whether ``pid`` has exited and waits to be reaped (it still answers signals)."""
    try:
        return psutil.Process(pid).status() in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except psutil.ZombieProcess:
        return True
    except GONE:
        return False


def _groups(pid: int) -> tuple[int, int]:
    if not hasattr(os, "getpgid"):
        return -1, -1
    return os.getpgid(pid), os.getsid(pid)


def table() -> dict[int, ProcessInfo]:
    """Every process the system shows: pid -> its parent, group, session, start and whether it is a
    zombie (a process that exits while this is read is left out)."""
    found = {}
    for proc in psutil.process_iter(["ppid", "status", "create_time"]):
        info = proc.info
        try:
            pgid, sid = _groups(proc.pid)
        except OSError:
            continue
        start = None if info["create_time"] is None else _start_value(proc.pid, info["create_time"])
        if info["ppid"] is None or start is None:
            continue
        found[proc.pid] = ProcessInfo(info["ppid"], pgid, sid, start,
                                      info["status"] in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD))
    return found


def ancestors(pid: int | None = None) -> set[int]:
    """``pid`` (this process by default) and its parents, up to the first process."""
    pid = os.getpid() if pid is None else pid
    try:
        return {pid} | {p.pid for p in psutil.Process(pid).parents()}
    except GONE:
        return {pid}


def open_file_ids(pid: int) -> set[tuple[int, int]] | None:
    """(device, inode) of every file ``pid`` holds open; None where that cannot be known (another
    user's process, or psutil denied); an empty set for a process that is gone.

    With /proc: each open descriptor stat-ed through /proc/PID/fd, which is the open file itself.
    Without: the paths psutil lists, stat-ed now, which a rename or a replacement would fool."""
    if HAS_PROC:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except FileNotFoundError:
            return set()
        except OSError:
            return None
        ids = set()
        for fd in fds:
            try:
                opened = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            ids.add((opened.st_dev, opened.st_ino))
        return ids
    try:
        paths = [f.path for f in psutil.Process(pid).open_files()]
    except psutil.NoSuchProcess:
        return set()
    except GONE:
        return None
    return file_ids(paths)


def own_cgroup() -> Path | None:
    """This process's cgroup v2 folder as mounted, or None (not Linux, v1 only, not mounted)."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            line = next(ln for ln in f.read().splitlines() if ln.startswith("0::"))
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            mount = next(ln.split(" - ")[0].split()[4] for ln in f.read().splitlines() if " - cgroup2 " in ln)
    except (OSError, StopIteration, IndexError):
        return None
    return Path(mount) / line[3:].strip().lstrip("/")


@dataclass(frozen=True)
class Usage:
    """What one process uses now: CPU as a percentage of one core (over the time since the last
    sample; 400 = four cores busy), its threads and its resident memory."""

    cpu_percent: float
    threads: int
    rss_bytes: int


class UsageSampler:
    """Samples one process's :class:`Usage` at most once per ``interval_s`` (asked more often, it
    answers the last sample): psutil reads a few /proc files per sample, so a panel polling
    several times a second costs what one sample a second costs."""

    def __init__(self, pid: int, interval_s: float = 1.0, clock=None):
        import time

        self.pid, self.interval_s = pid, interval_s
        self._clock = clock or time.monotonic
        self._last_at: float | None = None
        self._last: Usage | None = None
        try:
            self._process = psutil.Process(pid)
            self._process.cpu_percent(None)  # the first call starts the interval the next one measures
        except GONE:
            self._process = None

    def sample(self) -> Usage | None:
        """The process's usage (None: gone or not ours to see)."""
        now = self._clock()
        if self._last_at is not None and now - self._last_at < self.interval_s:
            return self._last
        self._last_at = now
        if self._process is None:
            return None
        try:
            with self._process.oneshot():
                self._last = Usage(self._process.cpu_percent(None), self._process.num_threads(),
                                   self._process.memory_info().rss)
        except GONE:
            self._process, self._last = None, None
        return self._last


def file_ids(paths) -> set[tuple[int, int]]:
    """(device, inode) of each path that exists: what a file is, whatever name or link reaches it."""
    ids = set()
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        ids.add((st.st_dev, st.st_ino))
    return ids
