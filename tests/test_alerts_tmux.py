"""The alert's bell as tmux sees it: written inside a tmux window (wrapped escapes and all), it
fires tmux's own alert-bell hook, the one a learner's tmux rings or flags the window with.
Soak tier: a real tmux server and a child interpreter."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.waiting import wait_until

pytestmark = [pytest.mark.soak, pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")]

REPO = Path(__file__).resolve().parents[1]
WRITE = ("import sys; from minigpt import alerts; "
         "sys.stdout.buffer.write(alerts.escape_bytes(alerts.event('finished', 'r', 'r finished'))); "
         "sys.stdout.flush()")


def test_the_alert_fires_tmuxs_bell_hook(tmp_path):
    sock, rang = tmp_path / "tmux.sock", tmp_path / "rang"

    def tmux(*args: str) -> None:
        subprocess.run(["tmux", "-S", str(sock), "-f", "/dev/null", *args], check=True, timeout=30)

    tmux("new-session", "-d", "-s", "alerts", "-x", "80", "-y", "24", "sleep 60")
    try:
        tmux("set-option", "-g", "bell-action", "any")
        tmux("set-option", "-g", "monitor-bell", "on")
        tmux("set-hook", "-g", "alert-bell", f"run-shell {shlex.quote('touch ' + shlex.quote(str(rang)))}")
        # a window in the background, as a run's terminal is while the learner reads elsewhere
        command = f"cd {shlex.quote(str(REPO))} && {shlex.quote(sys.executable)} -c {shlex.quote(WRITE)}; sleep 30"
        tmux("new-window", "-d", command)
        wait_until(rang.exists, 30, "tmux's alert-bell hook")
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], check=False, timeout=30)
