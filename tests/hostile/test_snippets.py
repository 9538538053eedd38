"""Lesson snippets: endless output, endless runs and leftover processes are all bounded.

A snippet runs in its own process group; the group is killed on the time limit, past the output
limit, once the snippet's own process ends (so a grandchild holding the pipe cannot stretch the
limit or outlive the run), when the learner leaves the lesson and when the app quits.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from minigpt.lessons import Lesson
from minigpt.snippets import OUTPUT_LIMIT, run_snippet, run_snippet_async
from tests.helpers.waiting import until, wait_until
from tui import navigation
from tui.lessons.snippet import SnippetBlock


def grandchild_code(pid_file: Path, then: str) -> str:
    """A snippet that starts a long ``sleep`` (inheriting its output), notes its pid, then ``then``."""
    return (f"import subprocess, time\n"
            f"p = subprocess.Popen(['sleep', '300'])\n"
            f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
            f"print('started', flush=True)\n{then}\n")


def is_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # killed but not yet reaped by whoever adopted it
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
    except (OSError, IndexError):
        return True


def wait_gone(pid: int, within: float = 5.0) -> bool:
    return wait_until(lambda: is_gone(pid), within, f"process {pid} to be gone")


def read_pid(pid_file: Path, within: float = 15.0) -> int:
    return int(wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), within,
                          "the snippet to start its grandchild"))


def test_endless_output_is_cut_and_the_snippet_stopped():
    start = time.monotonic()
    r = run_snippet("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n", timeout=30)
    assert r.truncated and not r.timed_out and r.returncode is None and not r.ok
    assert len(r.stdout) + len(r.stderr) == OUTPUT_LIMIT
    assert "output cut at 64 KiB" in r.note
    assert time.monotonic() - start < 15


def test_time_limit_kills_the_grandchild_too(tmp_path):
    pid_file = tmp_path / "pid"
    r = run_snippet(grandchild_code(pid_file, "time.sleep(300)"), timeout=2)
    assert r.timed_out and r.returncode is None and r.stdout == "started\n"
    assert wait_gone(read_pid(pid_file))


def test_a_grandchild_holding_the_pipe_cannot_stretch_the_run(tmp_path):
    pid_file = tmp_path / "pid"
    start = time.monotonic()
    r = run_snippet(grandchild_code(pid_file, "print('done')"), timeout=60)
    assert r.ok and r.stdout == "started\ndone\n"
    assert time.monotonic() - start < 15  # was: until the 60 s limit, the pipe held open
    assert wait_gone(read_pid(pid_file))


def test_cancelling_the_async_run_kills_the_group(tmp_path):
    pid_file = tmp_path / "pid"

    async def run_then_cancel() -> int:
        task = asyncio.ensure_future(run_snippet_async(grandchild_code(pid_file, "time.sleep(300)")))
        pid = await asyncio.get_running_loop().run_in_executor(None, read_pid, pid_file)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        return pid

    assert wait_gone(asyncio.run(run_then_cancel()))


def _lesson(code: str) -> Lesson:
    body = f"# Hostile\n\n```python runnable\n{code}```\n"
    return Lesson(id="hostile", title="Hostile", order=999, objectives=[], tags=[], body=body)


async def _start_snippet(app, pilot, pid_file: Path) -> int:
    navigation.open_screen(app, "lesson", _lesson(grandchild_code(pid_file, "time.sleep(300)")))
    await pilot.pause()
    block = app.screen.query_one(SnippetBlock)
    block.focus()
    await pilot.press("enter")
    await pilot.pause()
    assert block.state == "running"
    return await asyncio.get_running_loop().run_in_executor(None, read_pid, pid_file)


async def test_leaving_the_lesson_kills_its_snippet(tmp_path, quick_decks, make_app):
    pid_file = tmp_path / "pid"
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        pid = await _start_snippet(app, pilot, pid_file)
        await pilot.press("escape")
        await until(pilot, lambda: not navigation.is_screen(app.screen, "lesson"), 10, "the lesson to close")
        assert wait_gone(pid)


async def test_quitting_the_app_kills_a_running_snippet(tmp_path, quick_decks, make_app):
    pid_file = tmp_path / "pid"
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        pid = await _start_snippet(app, pilot, pid_file)
        await pilot.press("ctrl+q")
    assert wait_gone(pid)
