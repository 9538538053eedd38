"""A snippet's children that leave its session (``start_new_session``, ``setsid``, a double fork)
are killed with it: by its cgroup where one can be made, otherwise by following its session and
descendants through /proc (both bounds are tried here)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from minigpt import snippets, spawn
from minigpt.snippets import run_snippet, run_snippet_async
from tests.helpers.waiting import until, wait_until

from .test_snippets import is_gone


def _pids(pid_file: Path) -> list[int]:
    return [int(p) for p in pid_file.read_text().split()] if pid_file.exists() else []


def _wait_gone(pids: list[int], timeout: float = 5.0) -> bool:
    return wait_until(lambda: all(is_gone(p) for p in pids), timeout, f"processes {pids} to be gone")


ESCAPES = {
    # the sweep's reproduction: a child in a session of its own
    "new_session": "p = subprocess.Popen(['sleep', '300'], start_new_session=True); note(p.pid)",
    # the shell's way
    "setsid": "p = subprocess.Popen(['setsid', 'sleep', '300']); note(p.pid)",
    # not tried by the sweep: a double fork whose middle process exits (the grandchild's parent is
    # gone, and it is in a new session too), then the snippet ends by itself
    "double_fork": ("r, w = os.pipe()\n"
                    "if os.fork() == 0:\n"
                    "    os.setsid()\n"
                    "    if os.fork() == 0:\n"
                    "        os.write(w, str(os.getpid()).encode()); os.close(w); time.sleep(300)\n"
                    "    os._exit(0)\n"
                    "os.close(w); note(int(os.read(r, 20)))"),
}


def _code(pid_file: Path, escape: str, then: str) -> str:
    return ("import os, subprocess, time\n"
            f"def note(pid): open({str(pid_file)!r}, 'a').write(f'{{pid}} ')\n"
            f"{ESCAPES[escape]}\nprint('started', flush=True)\n{then}\n")


@pytest.fixture(params=[True, False], ids=["cgroup", "proc-walk"])
def bound(request, monkeypatch):
    if request.param and spawn.ProcessTree().cgroup is None:
        pytest.skip("no writable cgroup v2 here")
    monkeypatch.setattr(snippets, "USE_CGROUP", request.param)
    return request.param


@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_escaped_child_dies_when_the_snippet_times_out(tmp_path, bound, escape):
    pid_file = tmp_path / "pids"
    result = run_snippet(_code(pid_file, escape, "time.sleep(300)"), timeout=2.0)
    assert result.timed_out
    pids = _pids(pid_file)
    assert pids and _wait_gone(pids), f"left running: {pids}"


@pytest.mark.parametrize("escape", ["new_session", "double_fork"])
def test_escaped_child_dies_when_the_snippet_ends_by_itself(tmp_path, bound, escape):
    pid_file = tmp_path / "pids"
    result = run_snippet(_code(pid_file, escape, "time.sleep(0.3)"), timeout=10.0)
    assert result.returncode == 0, result.stderr
    pids = _pids(pid_file)
    assert pids and _wait_gone(pids), f"left running: {pids}"


def test_escaped_child_dies_when_the_app_stops_the_snippet(tmp_path, bound):
    """The app's runner (asyncio), cancelled as when the learner leaves the lesson."""
    pid_file = tmp_path / "pids"

    async def scenario():
        task = asyncio.ensure_future(run_snippet_async(_code(pid_file, "setsid", "time.sleep(300)"), timeout=30))
        await until(None, pid_file.exists, 10, "the snippet to note its escaped child")
        await asyncio.sleep(0.3)  # a look or two by the watcher
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    pids = _pids(pid_file)
    assert pids and _wait_gone(pids), f"left running: {pids}"


def test_a_fork_bomb_is_stopped_with_its_tree(tmp_path, bound):
    """Not tried by the sweep: a snippet whose processes keep forking (bounded here to a few
    dozen) is gone entirely once stopped."""
    pid_file = tmp_path / "pids"
    code = ("import os, time\n"
            f"def note(pid): open({str(pid_file)!r}, 'a').write(f'{{pid}} ')\n"
            "for _ in range(5):\n"
            "    if os.fork() == 0:\n"
            "        os.setsid(); note(os.getpid())\n"
            "print('started', flush=True)\ntime.sleep(300)\n")
    result = run_snippet(code, timeout=2.0)
    assert result.timed_out
    pids = _pids(pid_file)
    assert pids and _wait_gone(pids), f"left running: {pids}"


def test_the_tree_never_includes_this_process():
    tree = spawn.ProcessTree(use_cgroup=False)
    tree.adopt(os.getpid())
    assert os.getpid() not in tree.members()
