"""Starting child processes: the one place that does (trainers, sweep schedulers, lesson snippets).

What differs between the children is passed in as arguments, never decided here: the environment
(:func:`child_env`), a new session (so a closed terminal does not take a trainer down), the
niceness, the thread policy, and for code a learner typed a :class:`ProcessTree`, the bound that
lets everything the child started be killed with it.

The bound is a cgroup v2 of its own where the current one can be written (the kernel then kills the
whole tree at once, whatever it did to leave its session); elsewhere the child's session, process
group and descendants are found in the process table (``minigpt.processes``, through psutil),
remembered while it runs, and killed until none is left. That fallback cannot catch a process that leaves the session *and* its parent between two
looks (``ProcessTree.watch``, every tenth of a second while a snippet runs).

Torch-free and near the library's bottom layer: it imports only ``minigpt.processes`` from minigpt.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from subprocess import PIPE  # noqa: F401  (callers ask for a pipe without importing subprocess)

from minigpt import processes

# Environment variables that set how many threads the maths libraries start.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")

# Run in a bare interpreter before the child: lower its priority, join its cgroup, become the
# "subreaper" of its descendants (an orphan is then adopted by the child, not by init, so it stays
# in the tree: the setting survives exec), then exec the child in the same pid (so the caller's
# process object, signals and waits stay right).
_LAUNCHER = ("import os,sys\n"
             "nice,procs,reap=int(sys.argv[1]),sys.argv[2],sys.argv[3]=='1'\n"
             "if nice: os.nice(nice)\n"
             "if procs:\n"
             "  try:\n"
             "    with open(procs,'w') as f: f.write('0')\n"
             "  except OSError: pass\n"
             "if reap:\n"
             "  try:\n"
             "    import ctypes; ctypes.CDLL(None).prctl(36,1,0,0,0)\n"
             "  except Exception: pass\n"
             "os.execv(sys.argv[4],sys.argv[4:])\n")


# The reaper: a small process between the caller and code it does not trust. It starts its argv as
# its child, tied to its own life (PR_SET_PDEATHSIG, Linux: the child is killed the moment the reaper
# dies, and a child that finds it was orphaned before the tie took hold exits at once), waits, and
# exits with the child's status (128 + N when signal N ended it). Code that kills its parent kills
# the reaper only: the caller sees a status below zero (the reaper itself died by a signal).
_REAPER = ("import os,signal,subprocess,sys\n"
           "me=os.getpid()\n"
           "try:\n"
           "  import ctypes; prctl=ctypes.CDLL(None).prctl\n"
           "except Exception: prctl=None\n"
           "def tie():\n"
           "  if prctl is not None: prctl(1,int(signal.SIGKILL),0,0,0)\n"
           "  if os.getppid()!=me: os._exit(137)\n"
           "r=subprocess.Popen(sys.argv[1:],preexec_fn=tie).wait()\n"
           "sys.exit(128-r if r<0 else r)\n")


def behind_reaper(argv: list[str]) -> list[str]:
    """``argv`` run under a reaper (see ``_REAPER``): what the caller starts is the reaper, so the
    child's parent is never the caller. A status below zero then means the reaper itself was killed."""
    return [sys.executable, "-I", "-S", "-c", _REAPER, *argv]


def child_env(*, import_root: Path | str | None = None, threads: int | None = None, unbuffered: bool = True,
              extra: dict[str, str] | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a child: ``base`` (this process's by default) with ``import_root`` first on
    PYTHONPATH (the child imports this minigpt), unbuffered output, and ``threads`` threads for the
    maths libraries unless the user set them."""
    env = dict(os.environ if base is None else base)
    if import_root is not None:
        parts = [str(import_root)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(parts)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    if threads is not None:
        for name in THREAD_VARIABLES:
            env.setdefault(name, str(threads))
    env.update(extra or {})
    return env


# ---------------------------------------------------------------------------- looking at processes

# What the system says about processes comes from minigpt.processes (psutil; /proc only there).
process_start_time = processes.start_time
process_cmdline = processes.cmdline


# ---------------------------------------------------------------------------- the bound of a tree


def _cgroup_base() -> Path | None:
    """This process's own cgroup v2 folder, when it is mounted and writable."""
    base = processes.own_cgroup()
    return base if base is not None and os.access(base, os.W_OK) and (base / "cgroup.procs").exists() else None


_counter = itertools.count()


class ProcessTree:
    """Everything one child starts, bounded so it can all be killed (see the module's docstring)."""

    def __init__(self, use_cgroup: bool = True):
        self.cgroup: Path | None = None
        if use_cgroup and sys.platform.startswith("linux"):
            base = _cgroup_base()
            if base is not None:
                path = base / f"minigpt-{os.getpid()}-{next(_counter)}"
                with contextlib.suppress(OSError):
                    path.mkdir()
                    self.cgroup = path
        self.leader: int | None = None
        self.leader_start: int | None = None
        self.known: dict[int, int] = {}  # descendants seen while it ran: pid -> start time

    @property
    def kind(self) -> str:
        return "cgroup" if self.cgroup is not None else "session"

    def adopt(self, pid: int) -> None:
        """The child was started as ``pid`` (the leader of its own session)."""
        self.leader, self.leader_start = pid, process_start_time(pid)

    def members(self) -> set[int]:
        """The live processes of the tree: its cgroup, the leader's session and group, descendants of
        the leader or of any process seen in the tree before."""
        if self.leader is None:
            return set()
        table = processes.table()
        found: set[int] = set()
        if self.cgroup is not None:
            with contextlib.suppress(OSError, ValueError):
                found |= {int(p) for p in (self.cgroup / "cgroup.procs").read_text().split()}
        for pid, info in table.items():
            if self.leader in (info.sid, info.pgid) and (self.leader_start is None or info.start >= self.leader_start):
                found.add(pid)
        roots = {self.leader} | {p for p, start in self.known.items() if p in table and table[p].start == start}
        found |= roots & set(table)
        children: dict[int, list[int]] = {}
        for pid, info in table.items():
            children.setdefault(info.ppid, []).append(pid)
        stack = list(roots)
        while stack:
            for child in children.get(stack.pop(), []):
                if child not in found:
                    found.add(child)
                    stack.append(child)
        # This process and its parents are never part of a child's tree, whatever the table says.
        found = {p for p in found if p in table and not table[p].zombie} - processes.ancestors()
        self.known.update({p: table[p].start for p in found})
        return found

    def watch(self) -> None:
        """Remember who is in the tree now, so a process that later leaves its session and its
        parent is still known (the fallback's only way to follow a double fork)."""
        if self.cgroup is None:
            self.members()

    def kill(self, rounds: int = 200) -> bool:
        """Kill the whole tree; True once nothing of it is left. Stopped first, then killed, round
        after round, so a process that forks meanwhile leaves no child behind."""
        if self.leader is None:
            self._remove_cgroup()
            return True
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                (self.cgroup / "cgroup.kill").write_text("1")
        stopped: set[int] = set()
        left: set[int] = set()
        for _ in range(rounds):
            live = left = self.members()
            if not live:
                break
            fresh = live - stopped
            # Stop first (a stopped process cannot fork), look again, and kill only once a look
            # finds nobody new: a fork bomb loses the race instead of winning it.
            sig = signal.SIGSTOP if fresh else signal.SIGKILL
            for pid in fresh or live:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
            stopped |= fresh
            if not fresh:
                time.sleep(0.005)
        if not left:
            self._remove_cgroup()
        return not left

    def _remove_cgroup(self) -> None:
        for _ in range(50 if self.cgroup is not None else 0):  # emptied a moment after the last exit
            try:
                self.cgroup.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)


# ---------------------------------------------------------------------------- starting


def _argv(argv: list[str], niceness: int, tree: ProcessTree | None) -> list[str]:
    procs = str(tree.cgroup / "cgroup.procs") if tree is not None and tree.cgroup is not None else ""
    reap = tree is not None and sys.platform.startswith("linux")  # PR_SET_CHILD_SUBREAPER is Linux's
    if not (niceness and hasattr(os, "nice")) and not procs and not reap:
        return list(argv)
    import shutil

    program = argv[0] if os.path.isabs(argv[0]) else (shutil.which(argv[0]) or argv[0])
    if procs and not niceness and os.path.exists("/bin/sh"):
        # The cgroup bounds the tree by itself: a shell joins it and execs, in a millisecond
        # where a second interpreter (for the niceness and the subreaper) takes tens of them.
        return ["/bin/sh", "-c", '{ echo 0 > "$1"; } 2>/dev/null; shift; exec "$@"', "sh", procs, program,
                *argv[1:]]
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(niceness), procs, "1" if reap else "0",
            program, *argv[1:]]


def _limit_memory(limit: int | None):
    """A preexec_fn capping the child's address space, soft and hard (it cannot raise it again)."""
    try:
        import resource
    except ImportError:  # Windows: no rlimits; the time and output limits still hold
        return None
    return None if limit is None else lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _options(new_session: bool, env: dict[str, str] | None, cwd, memory_limit: int | None = None) -> dict:
    # A new session also makes the child lead its own process group: killpg(pid) reaches it all.
    options = {"start_new_session": new_session and os.name == "posix", "env": env,
               "cwd": None if cwd is None else str(cwd)}
    if memory_limit is not None:
        options["preexec_fn"] = _limit_memory(memory_limit)
    return options


def popen(argv: list[str], *, env: dict[str, str] | None = None, cwd=None, new_session: bool = True,
          niceness: int = 0, tree: ProcessTree | None = None, stdin=subprocess.DEVNULL, stdout=None,
          stderr=None, memory_limit: int | None = None) -> subprocess.Popen:
    """Start ``argv`` from plain code (no event loop); ``memory_limit`` caps its address space (bytes)."""
    proc = subprocess.Popen(_argv(argv, niceness, tree), stdin=stdin, stdout=stdout, stderr=stderr,
                            **_options(new_session, env, cwd, memory_limit))
    if tree is not None:
        tree.adopt(proc.pid)
    return proc


async def start(argv: list[str], *, env: dict[str, str] | None = None, cwd=None, new_session: bool = True,
                niceness: int = 0, tree: ProcessTree | None = None, stdin=subprocess.DEVNULL, stdout=None,
                stderr=None, memory_limit: int | None = None):
    """Start ``argv`` as an asyncio subprocess (from the app's event loop)."""
    import asyncio

    proc = await asyncio.create_subprocess_exec(*_argv(argv, niceness, tree), stdin=stdin, stdout=stdout,
                                                stderr=stderr, **_options(new_session, env, cwd, memory_limit))
    if tree is not None:
        tree.adopt(proc.pid)
    return proc


def run_in_terminal(argv: list[str]) -> int:
    """Run ``argv`` in the foreground on the caller's own terminal (the learner's $EDITOR while the
    app steps aside) and wait for it: same session, inherited stdin/stdout, no bound. Its exit code."""
    return subprocess.run(argv, check=False).returncode
