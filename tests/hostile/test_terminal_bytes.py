"""Bytes from the terminal that are not UTF-8 (a Latin-1 paste, an 8-bit Meta key): the app goes
on. Driven through a real pseudo-terminal, so Textual's own input thread reads them."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

import pytest

from tests.helpers.hostile import REPO
from tests.helpers.waiting import wait_until
from tui.terminal_input import tolerate_non_utf8_input

HOME_TEXT = "Learn how GPT works"


def test_the_drivers_decode_a_bad_byte_as_a_replacement_character():
    from textual.drivers import linux_driver, web_driver

    tolerate_non_utf8_input()
    for module in (linux_driver, web_driver):
        decode = module.getincrementaldecoder("utf-8")().decode
        assert decode(b"ab\xe9cd") == "ab\ufffdcd"
        assert decode(b"\xc3") == "" and decode(b"\xa9") == "\u00e9"  # split valid sequences still join


def _tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=20).stdout


def _seen_within(condition, window: float) -> bool:
    """Whether ``condition`` comes true within ``window`` seconds: a look for something that must
    NOT happen, so the whole window is spent when all is well (not a wait; see tests/helpers/waiting.py)."""
    try:
        wait_until(condition, window, step=0.2)
    except AssertionError:
        return False
    return True


PAYLOADS = ["61 62 e9 63 64",   # the sweep's paste: ab\xe9cd
            "ff fe 80 c3",      # not tried: bytes no UTF-8 starts with
            "1b e9",            # an 8-bit Meta key after ESC
            "ed a0 80"]         # a UTF-16 surrogate encoded as UTF-8


# By default one app gets every payload, one after another, then the look for an error; each
# payload alone in an app of its own is the soak tier's (the same bytes again, ~9 s of tmux each).
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
@pytest.mark.parametrize("payloads", [pytest.param(PAYLOADS, id="all-in-one-app")]
                         + [pytest.param([p], id=p, marks=pytest.mark.soak) for p in PAYLOADS])
def test_the_app_survives_bytes_that_are_not_utf8(tmp_path, payloads):
    """The bytes go through tmux into the app's terminal, where Textual's input thread reads them."""
    # One tmux server per case: reusing the name let a case start its session on the previous
    # case's server while that was still shutting down (a blank pane, once under load).
    socket, done = f"minigpt-bytes-{os.getpid()}-{tmp_path.name}", tmp_path / "exit-status"
    command = (f"cd {shlex.quote(str(REPO))} && {shlex.quote(sys.executable)} -m tui.cli --data-dir "
               f"{shlex.quote(str(tmp_path / 'data'))}; echo $? > {shlex.quote(str(done))}; sleep 60")
    _tmux(socket, "new-session", "-d", "-s", "app", "-x", "80", "-y", "24", command)
    try:
        screen = lambda: _tmux(socket, "capture-pane", "-p", "-t", "app")  # noqa: E731
        wait_until(lambda: HOME_TEXT in screen(), 60, "the home screen", step=0.2, describe=screen)
        for payload in payloads:
            _tmux(socket, "send-keys", "-t", "app", "-H", *payload.split())
        # The input thread's error took seconds to show (the app shuts down first): look for it
        # for a while; nothing is the pass.
        assert not _seen_within(lambda: done.exists() or "Error" in screen(), 8), screen()
        _tmux(socket, "send-keys", "-t", "app", "C-q")  # still answering keys
        wait_until(done.exists, 30, "the app to exit", step=0.2, describe=screen)
        assert done.read_text().strip() == "0", screen()
    finally:
        _tmux(socket, "kill-server")
