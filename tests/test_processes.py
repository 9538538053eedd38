"""Process and machine facts through psutil, /proc read in one module only, and the logic that uses
them pinned with the facts faked, so a system without /proc (macOS) is tested on Linux too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections import namedtuple
from pathlib import Path

import psutil
import pytest

from minigpt import processes, spawn
from minigpt.runs import listing, lock
from minigpt.runs.lock import RunLock
from minigpt.training import cpu_policy

ROOT = Path(__file__).resolve().parent.parent
PROC_PATH = re.compile(r"""["']/proc\b""")  # a string that starts a /proc path: "/proc/…", f"/proc/{pid}…"
LINUX_PROC = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="compares with /proc itself")


def test_no_module_but_processes_reads_a_proc_path():
    readers = {path.relative_to(ROOT).as_posix() for folder in ("minigpt", "tui") for path in (ROOT / folder).rglob("*.py")
               if PROC_PATH.search(path.read_text(encoding="utf-8"))}
    assert readers == {"minigpt/processes.py"}, "read /proc only in minigpt/processes.py (psutil elsewhere)"


# ---------------------------------------------------------------------------- the real facts


@LINUX_PROC
def test_a_start_time_is_the_clock_ticks_that_status_files_recorded_before_psutil():
    with open(f"/proc/{os.getpid()}/stat", encoding="utf-8") as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    assert processes.start_time(os.getpid()) == ticks
    assert processes.table()[os.getpid()].start == ticks


@LINUX_PROC
def test_a_stepped_wall_clock_does_not_change_a_recorded_start(monkeypatch):
    """psutil's boot time is now minus uptime: a clock stepped by NTP moved it 2 s on a CI machine, and
    a live run's recorded start then failed to match (the run read as dead)."""
    before = processes.start_time(os.getpid())
    real = psutil.boot_time()
    monkeypatch.setattr(psutil, "boot_time", lambda: real + 2.0)
    assert processes.start_time(os.getpid()) == before == processes.table()[os.getpid()].start


def test_the_table_shows_a_child_its_group_and_a_zombie():
    child = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not processes.is_zombie(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)  # exited, not yet reaped: a zombie until wait()
        info = processes.table()[child.pid]
        assert (info.ppid, info.pgid, info.sid, info.zombie) == (os.getpid(), child.pid, child.pid, True)
        assert not listing.pid_alive(child.pid)
    finally:
        child.wait()
    assert child.pid not in processes.table() and processes.start_time(child.pid) is None
    me = processes.table()[os.getpid()]
    assert (me.pgid, me.sid, me.zombie) == (os.getpgid(0), os.getsid(0), False)
    assert {os.getpid(), os.getppid()} <= processes.ancestors()
    assert processes.cmdline(os.getpid())[0] == psutil.Process().cmdline()[0]
    assert processes.cwd(os.getpid()) == Path.cwd()


def test_a_lock_file_held_open_is_proven_by_device_and_inode(tmp_path):
    with RunLock(tmp_path):
        assert lock.holds_lock(tmp_path, os.getpid()) is True
    assert lock.holds_lock(tmp_path, os.getpid()) is False


# ---------------------------------------------------------------------------- without /proc (macOS)


@pytest.fixture
def no_proc(monkeypatch):
    """This system as macOS shows it: no /proc, open files from psutil's list of paths."""
    monkeypatch.setattr(processes, "HAS_PROC", False)
    monkeypatch.setattr(processes, "PROVEN_BY", "psutil's list of open files")


def test_without_proc_the_open_files_come_from_psutil_by_path(no_proc, tmp_path):
    with RunLock(tmp_path):
        assert lock.holds_lock(tmp_path, os.getpid()) is True
    assert lock.holds_lock(tmp_path, os.getpid()) is False
    assert "no /proc" in lock.proof_limit()


def test_without_proc_a_process_whose_files_are_hidden_is_proven_only_by_the_locks_record(no_proc, tmp_path,
                                                                                          monkeypatch):
    def denied(self):
        raise psutil.AccessDenied(self.pid)

    monkeypatch.setattr(psutil.Process, "open_files", denied)
    monkeypatch.setattr(lock, "process_cmdline", lambda pid: ["minigpt", "train", "--out", str(tmp_path)])
    assert processes.open_file_ids(os.getpid()) is None
    with RunLock(tmp_path):  # the lock records this process's pid
        assert lock.holds_lock(tmp_path, os.getpid()) is None
        assert lock.proven_trainer(tmp_path, os.getpid())
        assert not lock.proven_trainer(tmp_path, os.getppid())  # holds nothing the lock records
    assert not lock.proven_trainer(tmp_path, os.getpid())  # released: nobody holds it


def test_with_proc_the_refusal_adds_nothing():
    if processes.HAS_PROC:
        assert lock.proof_limit() == ""


# ---------------------------------------------------------------------------- the tree, faked


def test_a_snippets_tree_is_its_session_group_and_descendants_never_a_zombie_or_an_ancestor(monkeypatch):
    P = processes.ProcessInfo
    table = {100: P(1, 100, 100, 500, False),   # the leader
             101: P(100, 100, 100, 510, False),  # its child
             102: P(1, 102, 100, 520, False),    # left its group, still in the session
             103: P(102, 103, 103, 530, False),  # left the session, child of 102
             104: P(100, 100, 100, 540, True),   # a zombie
             105: P(1, 100, 100, 400, False),    # the session's number, but started before the leader
             200: P(1, 200, 200, 100, False)}    # unrelated
    monkeypatch.setattr(processes, "table", lambda: table)
    monkeypatch.setattr(processes, "ancestors", lambda pid=None: {1})
    tree = spawn.ProcessTree(use_cgroup=False)
    tree.leader, tree.leader_start = 100, 500
    assert tree.members() == {100, 101, 102}
    assert tree.members() == {100, 101, 102, 103}  # 102 is known now: its descendants are looked for too
    # 103's parent exits: it is still known, by its pid and start time, and found again.
    table[103] = P(1, 103, 103, 530, False)
    del table[102]
    assert tree.members() == {100, 101, 103}
    table[103] = P(1, 103, 103, 999, False)  # the pid reused by a process started later
    assert tree.members() == {100, 101}


def test_a_zombie_is_not_alive(monkeypatch):
    monkeypatch.setattr(processes, "is_zombie", lambda pid: True)
    assert not listing.pid_alive(os.getpid())


# ---------------------------------------------------------------------------- CPU and memory, faked

SystemTimes = namedtuple("SystemTimes", "user nice system idle")  # macOS's fields: no iowait
OwnTimes = namedtuple("OwnTimes", "user system children_user children_system")


def test_cpu_samples_from_psutils_times_on_a_system_without_iowait(monkeypatch):
    monkeypatch.setattr(psutil, "cpu_times", lambda: SystemTimes(3.0, 0.5, 1.5, 5.0))
    monkeypatch.setattr(psutil.Process, "cpu_times", lambda self: OwnTimes(0.75, 0.25, 9.0, 9.0))
    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: 4 if logical else 2)
    assert cpu_policy.read_sample() == cpu_policy.CpuSample(busy_ticks=500, total_ticks=1000, own_ticks=100, online_cores=4)


def test_unreadable_cpu_times_leave_the_load_unmeasured(monkeypatch):
    def denied():
        raise psutil.AccessDenied()

    monkeypatch.setattr(psutil, "cpu_times", denied)
    assert cpu_policy.read_sample() is None and cpu_policy.measure_busy_cores(0) is None
    assert cpu_policy.decide(None, 4).reason == "CPU use could not be measured here"


@pytest.mark.parametrize("physical, want", [(None, "usable"), (1, 1), (64, "usable")])
def test_physical_cores_are_psutils_count_within_the_usable_ones(monkeypatch, physical, want):
    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: physical)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert cpu_policy.physical_cores() == (usable if want == "usable" else want)


def test_free_memory_is_psutils_available_or_unknown(monkeypatch):
    from minigpt.training.session import available_memory_bytes

    Memory = namedtuple("Memory", "total available")
    monkeypatch.setattr(psutil, "virtual_memory", lambda: Memory(16 << 30, 3 << 30))
    assert available_memory_bytes("cpu") == 3 << 30

    def unreadable():
        raise RuntimeError("line 'MemAvailable' not found")

    monkeypatch.setattr(psutil, "virtual_memory", unreadable)
    assert available_memory_bytes("cpu") is None
