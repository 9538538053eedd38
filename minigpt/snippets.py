"""Runnable snippets: a lesson's ```` ```python runnable ```` block (or a kata's grader, through
``run_bounded``) run in a fresh interpreter within time, output and memory limits.

A snippet runs in a fresh interpreter in its own process group (its own session), so that one
signal reaches everything it started. The group is killed when the time limit passes, when the
output passes OUTPUT_LIMIT bytes, when the caller is cancelled (the learner left the lesson or
quit the app) and, in every case, once the snippet's own process has ended: a grandchild left
behind holding the output pipe can neither stretch the limit nor outlive the run. (A process
that calls setsid() itself leaves the group; containing that needs an OS sandbox.)
"""

from __future__ import annotations

import atexit
import os
import selectors
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from minigpt import spawn

# The repository root (or the installed package's parent): put on PYTHONPATH for snippets so that
# ``import minigpt`` works from any working directory.
_IMPORT_ROOT = Path(__file__).resolve().parent.parent

TIME_LIMIT_S = 20.0
OUTPUT_LIMIT = 64 * 1024  # bytes kept; a snippet printing more is stopped there
# Address space a snippet may map (RLIMIT_AS): torch's import maps 0.62 GiB (measured, one thread;
# 400 MiB fails it, 600 MiB passes); 2 GiB leaves room, and a runaway allocation gets MemoryError.
MEMORY_LIMIT = 2 * 1024**3
_DRAIN_S = 0.3  # after the snippet's process ends, how long its last output may take to arrive
_live_trees: set[spawn.ProcessTree] = set()  # snippets still running, killed at interpreter exit too
USE_CGROUP = True  # bound a snippet's tree with a cgroup where one can be made (tests turn it off)


@dataclass(frozen=True)
class SnippetResult:
    stdout: str
    stderr: str
    returncode: int | None  # None when the snippet was stopped (time limit, output limit)
    timed_out: bool
    truncated: bool = False  # the output passed OUTPUT_LIMIT bytes and the snippet was stopped
    seconds: float = 0.0
    stopped: bool = False  # the caller asked it to stop (the learner left the lesson)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not (self.timed_out or self.truncated or self.stopped)

    @property
    def note(self) -> str | None:
        """Why the snippet was stopped, for the learner; None when it ended by itself."""
        if self.truncated:
            return f"output cut at {OUTPUT_LIMIT // 1024} KiB: the snippet printed more and was stopped"
        if self.timed_out:
            return f"stopped: ran longer than {self.seconds:.0f} s"
        if self.stopped:
            return "stopped before it finished"
        return None


def snippet_command(code: str) -> list[str]:
    """argv that runs ``code`` with this interpreter.

    Not ``-I``: isolated mode drops PYTHONPATH, and snippets must import minigpt. ``-u`` keeps the
    output unbuffered so the app can stream it as it comes.
    """
    return [sys.executable, "-u", "-c", code]


def snippet_env() -> dict[str, str]:
    """Environment for a snippet: minigpt importable wherever the app was started from."""
    # Snippets are tiny: one thread for the maths libraries (many only cost start-up time).
    env = spawn.child_env(import_root=_IMPORT_ROOT, threads=1, unbuffered=False)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    return env


def _end(tree: spawn.ProcessTree) -> None:
    """Kill a snippet and everything it started (its cgroup, or its session and descendants)."""
    _live_trees.discard(tree)
    tree.kill()


@atexit.register
def _kill_live_trees() -> None:
    for tree in list(_live_trees):
        _end(tree)


def _start_options(tree: spawn.ProcessTree, memory_limit: int | None = MEMORY_LIMIT, cwd=None) -> dict:
    return dict(env=snippet_env(), cwd=_IMPORT_ROOT if cwd is None else cwd, new_session=True, tree=tree,
                memory_limit=memory_limit)


def _text(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", "replace")


def run_snippet(code: str, timeout: float = TIME_LIMIT_S, limit: int = OUTPUT_LIMIT,
                stop: threading.Event | None = None, memory_limit: int | None = MEMORY_LIMIT) -> SnippetResult:
    """Run ``code`` and wait (at most ``timeout`` seconds); stdout and stderr apart.

    From a worker thread, pass ``stop`` and set it when the run is no longer wanted (the learner
    left the lesson): the snippet's group is killed within a tenth of a second.
    """
    return run_bounded(snippet_command(code), timeout, limit, stop, memory_limit)


def run_bounded(argv: list[str], timeout: float = TIME_LIMIT_S, limit: int = OUTPUT_LIMIT,
                stop: threading.Event | None = None, memory_limit: int | None = MEMORY_LIMIT,
                cwd: Path | str | None = None) -> SnippetResult:
    """:func:`run_snippet` for any command (the kata grader's reaper and harness), run in ``cwd``."""
    start = time.monotonic()
    tree = spawn.ProcessTree(USE_CGROUP)
    proc = spawn.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       **_start_options(tree, memory_limit, cwd))
    _live_trees.add(tree)
    buffers = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    timed_out = truncated = stopped = False
    ended_at = None
    try:
        with selectors.DefaultSelector() as sel:
            for stream in buffers:
                sel.register(stream, selectors.EVENT_READ)
            while sel.get_map() and not truncated:
                tree.watch()
                now = time.monotonic()
                if ended_at is None and proc.poll() is not None:
                    ended_at = now
                if ended_at is not None and now - ended_at > _DRAIN_S:
                    break  # the snippet ended; whoever still holds the pipe is a leftover
                if now - start >= timeout:
                    timed_out = True
                    break
                if stop is not None and stop.is_set():
                    stopped = True
                    break
                for key, _ in sel.select(min(0.1, timeout - (now - start))):
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        sel.unregister(key.fileobj)
                        continue
                    room = limit - sum(len(b) for b in buffers.values())
                    buffers[key.fileobj] += chunk[: max(room, 0)]
                    truncated = truncated or len(chunk) > room
        while not (timed_out or truncated or stopped):  # output closed: it may still be finishing
            tree.watch()
            try:
                proc.wait(min(0.1, max(timeout - (time.monotonic() - start), 0)))
                break
            except subprocess.TimeoutExpired:
                timed_out = time.monotonic() - start >= timeout
                stopped = stop is not None and stop.is_set()
    finally:
        _end(tree)
        proc.wait()
        for stream in buffers:
            stream.close()
    return SnippetResult(_text(buffers[proc.stdout]), _text(buffers[proc.stderr]),
                         None if timed_out or truncated or stopped else proc.returncode, timed_out,
                         truncated, time.monotonic() - start, stopped)


async def _watch(tree: spawn.ProcessTree) -> None:
    import asyncio

    while True:
        tree.watch()
        await asyncio.sleep(0.1)


async def run_snippet_async(code: str, timeout: float = TIME_LIMIT_S, limit: int = OUTPUT_LIMIT,
                            on_output: Callable[[str], None] | None = None) -> SnippetResult:
    """Run ``code`` without blocking the event loop; stderr merged into stdout, in order.

    ``on_output`` gets all the (capped) output so far each time more arrives. Cancelling the
    awaiting task kills the snippet's process group before the cancellation goes on.
    """
    import asyncio

    start = time.monotonic()
    tree = spawn.ProcessTree(USE_CGROUP)
    starting = asyncio.ensure_future(spawn.start(
        snippet_command(code), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        **_start_options(tree)))
    try:
        proc = await asyncio.shield(starting)
    except asyncio.CancelledError:  # cancelled while starting: the process may be running already
        starting.add_done_callback(lambda done: done.cancelled() or done.exception() or _end(tree))
        raise
    _live_trees.add(tree)
    watching = asyncio.ensure_future(_watch(tree))
    out = bytearray()
    timed_out = truncated = False
    exited = asyncio.ensure_future(proc.wait())
    reading = None
    try:
        while True:
            left = timeout - (time.monotonic() - start)
            if left <= 0:
                timed_out = True
                break
            reading = reading or asyncio.ensure_future(proc.stdout.read(65536))
            done, _ = await asyncio.wait({reading, exited}, timeout=left,
                                         return_when=asyncio.FIRST_COMPLETED)
            if reading not in done:
                if exited in done:  # the snippet ended: a moment for its last output, no more
                    done, _ = await asyncio.wait({reading}, timeout=_DRAIN_S)
                if reading not in done:
                    timed_out = exited not in done
                    break
            chunk, reading = reading.result(), None
            if not chunk:  # output closed: the snippet may still be finishing (Python's teardown)
                left = timeout - (time.monotonic() - start)
                timed_out = not (await asyncio.wait({exited}, timeout=max(left, 0)))[0]
                break
            room = limit - len(out)
            out += chunk[: max(room, 0)]
            if on_output is not None:
                on_output(_text(out))
            if len(chunk) > room:
                truncated = True
                break
    finally:
        _end(tree)
        for task in (reading, exited, watching):
            if task is not None and not task.done():
                task.cancel()
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except (TimeoutError, asyncio.CancelledError):
            pass
    code_ = proc.returncode if exited.done() and not exited.cancelled() else None
    return SnippetResult(_text(out), "", None if truncated or timed_out else code_, timed_out,
                         truncated, time.monotonic() - start)
