"""Load the lesson chapters and run their code snippets.

A lesson is a Markdown file with TOML front matter between two ``+++`` lines. Its body may hold two
special fenced blocks: ```` ```example ```` (one example id, replaced at display time by
``minigpt.teaching.examples.registry.render_example``) and ```` ```python runnable ```` (code the app runs and whose
output it shows). This module never imports Textual, so the tests and the CLI can use it directly.
"""

from __future__ import annotations

import atexit
import os
import re
import selectors
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from minigpt import guarded, paths, spawn
from minigpt.errors import LessonError

REQUIRED = {"id": str, "title": str, "order": int}
LIST_FIELDS = ("objectives", "tags")

# The repository root (or the installed package's parent): put on PYTHONPATH for snippets so that
# ``import minigpt`` works from any working directory.
_IMPORT_ROOT = Path(__file__).resolve().parent.parent

# A fence opens with three or more backticks and an info string; it closes with a line of at least
# as many backticks and nothing else. Tracking the length lets a snippet contain ``` in a string.
_FENCE = re.compile(r"^(`{3,})([^`]*)$")



@dataclass(frozen=True)
class Block:
    kind: str  # "markdown", "example" or "runnable"
    text: str


@dataclass
class Lesson:
    id: str
    title: str
    order: int
    objectives: list[str]
    tags: list[str]
    body: str
    path: Path | None = None
    extra: dict = field(default_factory=dict)  # unknown front-matter keys, kept for forward use

    def blocks(self) -> list[Block]:
        return split_blocks(self.body)

    def example_ids(self) -> list[str]:
        return [b.text for b in self.blocks() if b.kind == "example"]

    def snippets(self) -> list[str]:
        return [b.text for b in self.blocks() if b.kind == "runnable"]


def split_blocks(body: str) -> list[Block]:
    """Cut a lesson body into Markdown runs, example references and runnable snippets.

    Ordinary fenced code (```python without ``runnable``) stays inside the Markdown run so the
    Markdown widget renders it as code.
    """
    blocks: list[Block] = []
    md: list[str] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i].rstrip())
        if not m:
            md.append(lines[i])
            i += 1
            continue
        ticks, info = m.group(1), m.group(2).strip().split()
        j = i + 1
        while j < len(lines) and not (
            lines[j].strip().startswith(ticks) and set(lines[j].strip()) == {"`"}
        ):
            j += 1
        inner = lines[i + 1 : j]
        kind = None
        if info[:1] == ["example"]:
            kind = "example"
        elif len(info) >= 2 and info[0] == "python" and "runnable" in info[1:]:
            kind = "runnable"
        if kind is None:
            md.extend(lines[i : j + 1])
        else:
            _flush(blocks, md)
            text = "\n".join(inner).strip() if kind == "example" else "\n".join(inner) + "\n"
            blocks.append(Block(kind, text))
        i = j + 1
    _flush(blocks, md)
    return blocks


def _flush(blocks: list[Block], md: list[str]) -> None:
    text = "\n".join(md).strip("\n")
    if text.strip():
        blocks.append(Block("markdown", text))
    md.clear()


def parse_lesson(text: str, path: Path | None = None) -> Lesson:
    where = str(path) if path else "<lesson>"
    lines = text.splitlines()
    if not lines or lines[0].strip() != "+++":
        raise LessonError(f"{where}: front matter must start with a '+++' line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "+++")
    except StopIteration:
        raise LessonError(f"{where}: front matter has no closing '+++' line") from None
    try:
        meta = tomllib.loads("\n".join(lines[1:end]))
    except tomllib.TOMLDecodeError as e:
        raise LessonError(f"{where}: front matter is not valid TOML: {e}") from None
    for key, typ in REQUIRED.items():
        if key not in meta:
            raise LessonError(f"{where}: front matter is missing '{key}'")
        # bool is an int subclass; an order of `true` is a typo, not a number.
        if not isinstance(meta[key], typ) or isinstance(meta[key], bool):
            raise LessonError(f"{where}: '{key}' must be a {typ.__name__}")
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", meta["id"]):
        raise LessonError(f"{where}: id {meta['id']!r} must be a lowercase slug like 'kv-cache'")
    for key in LIST_FIELDS:
        value = meta.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise LessonError(f"{where}: '{key}' must be a list of strings")
    body = "\n".join(lines[end + 1 :]).strip("\n") + "\n"
    known = set(REQUIRED) | set(LIST_FIELDS)
    return Lesson(
        id=meta["id"], title=meta["title"], order=meta["order"],
        objectives=list(meta.get("objectives", [])), tags=list(meta.get("tags", [])),
        body=body, path=path, extra={k: v for k, v in meta.items() if k not in known},
    )


def default_directory() -> Path:
    return paths.lessons_dir() / "chapters"


def load_lessons(directory: Path | str | None = None) -> list[Lesson]:
    """Every ``*.md`` lesson in ``directory``, sorted by ``order``; ids and orders must be unique."""
    directory = Path(directory) if directory is not None else default_directory()
    if not directory.is_dir():
        raise LessonError(f"{directory}: lesson folder not found")
    lessons: list[Lesson] = []
    seen_ids: dict[str, Path] = {}
    seen_orders: dict[int, Path] = {}
    for path in sorted(directory.glob("*.md")):
        try:
            text = guarded.read_text(path, guarded.TEXT_FILE_BYTES)
        except (OSError, UnicodeDecodeError) as e:
            raise LessonError(f"{path}: cannot read lesson: {e}") from None
        lesson = parse_lesson(text, path)
        if lesson.id in seen_ids:
            raise LessonError(f"{path}: id '{lesson.id}' is already used by {seen_ids[lesson.id]}")
        if lesson.order in seen_orders:
            raise LessonError(
                f"{path}: order {lesson.order} is already used by {seen_orders[lesson.order]}"
            )
        seen_ids[lesson.id] = path
        seen_orders[lesson.order] = path
        lessons.append(lesson)
    return sorted(lessons, key=lambda l: l.order)


def lesson_by_id(lesson_id: str, directory: Path | str | None = None) -> Lesson:
    for lesson in load_lessons(directory):
        if lesson.id == lesson_id:
            return lesson
    raise KeyError(f"no lesson with id {lesson_id!r}")


# ---------------------------------------------------------------------------------------------
# Runnable snippets
#
# A snippet runs in a fresh interpreter in its own process group (its own session), so that one
# signal reaches everything it started. The group is killed when the time limit passes, when the
# output passes OUTPUT_LIMIT bytes, when the caller is cancelled (the learner left the lesson or
# quit the app) and, in every case, once the snippet's own process has ended: a grandchild left
# behind holding the output pipe can neither stretch the limit nor outlive the run. (A process
# that calls setsid() itself leaves the group; containing that needs an OS sandbox.)

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
