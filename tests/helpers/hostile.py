"""What the hostile suite's files share (see tests/hostile/__init__.py for the input classes): the
sequences a hostile file carries, the checks that none reaches a terminal, the CLI run as a user
would run it, and a bound that fails a test instead of hanging the suite."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]  # tests/helpers/ -> the repository


# Sequences a hostile file would carry: set the clipboard, set the window title, clear the screen
# (7-bit and 8-bit CSI), ring the bell, rewrite the current line.
OSC52 = "\x1b]52;c;cHduZWQ=\x07"


OSC0 = "\x1b]0;pwned\x07"


CSI_CLEAR = "\x1b[2J"


C1_CSI = "\x9b2J"


EVIL = [OSC52, OSC0, CSI_CLEAR, C1_CSI, "\x07", "ok\rspoof"]


# ESC, BEL and every other C0 control but newline and tab, DEL, and the C1 controls.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def one_error_line(result) -> str:
    """The one `Error: …` line a refused CLI call prints (exit status 2, no traceback)."""
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


def assert_no_control(text: str, where: str = "") -> None:
    """Fail with the offending characters when ``text`` holds a terminal control character."""
    found = sorted(set(_CONTROL.findall(text)))
    assert not found, f"control characters {found!r} reached the output {where}: {text[:300]!r}"


def minigpt(*args: str, data_dir: Path, timeout: float = 60, env: dict | None = None
            ) -> subprocess.CompletedProcess:
    """The ``minigpt`` command in a real subprocess: stdout and stderr as written, in bytes."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), "MINIGPT_DATA_DIR": str(data_dir),
                "OMP_NUM_THREADS": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], capture_output=True,
                          timeout=timeout, env=full_env, cwd=REPO, stdin=subprocess.DEVNULL)


def denied(path: Path) -> None:
    """Take every permission away from ``path``; skip where that cannot bite (running as root)."""
    path.chmod(0)
    if os.access(path, os.R_OK):
        pytest.skip("running as root: a permission-denied file is still readable")


@contextmanager
def bounded(seconds: int):
    """Fail (instead of hanging the suite) when the block takes longer than ``seconds``."""
    def expired(signum, frame):
        raise TimeoutError(f"took longer than {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    outer = signal.alarm(seconds)  # the whole test's own bound, resumed below
    start = time.monotonic()
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            signal.alarm(max(1, outer - int(time.monotonic() - start)))


def decoded(data: bytes) -> str:
    """Bytes from a terminal-bound stream as text; bytes that are not UTF-8 fail the test."""
    return data.decode("utf-8")


def screen_text(app) -> str:
    """What the app's screen shows right now: the text of every rendered cell, line by line."""
    update = app.screen._compositor.render_full_update()
    return "\n".join("".join(segment.text for strip in line for segment in strip)
                     for line in update.strips)


def terminal_output(app) -> str:
    """The exact characters the app would write to the terminal to draw the screen now."""
    return app.screen._compositor.render_full_update().render_segments(app.console)


def assert_screen_safe(app, *, contains: str | None = None) -> str:
    """No control character among the drawn cells, and none but the app's own escapes written."""
    text = screen_text(app)
    assert_no_control(text.replace("\n", ""), "on the screen")
    # Remove the app's own well-formed SGR and cursor sequences; nothing else may start with ESC.
    written = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal_output(app))
    assert "\x1b" not in written and "\x07" not in written and not re.search("[\x80-\x9f]", written)
    if contains is not None:
        assert contains in text, f"{contains!r} not on the screen:\n{text}"
    return text


def write_names(path: Path, size: int, seed: int = 0) -> Path:
    """About ``size`` bytes of lowercase name-like lines (3–11 letters): one random megabyte,
    repeated (repeats change nothing for the loader, and copying is fast)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, 12, min(size, 1 << 20) // 7)
    ends = np.cumsum(lengths + 1)
    unit = rng.integers(ord("a"), ord("z") + 1, int(ends[-1]), dtype=np.uint8)
    unit[ends - 1] = ord("\n")
    unit = unit.tobytes()
    data = unit * (size // len(unit)) + unit[: unit.rfind(b"\n", 0, size % len(unit)) + 1]
    path.write_bytes(data)
    return path


EVIL_RUN = f"names{OSC0}{CSI_CLEAR}"  # a finished run whose folder name is hostile


BROKEN_RUN = f"broken{OSC52}"  # a failed run whose error message is hostile


BROKEN_ERROR = f"boom{OSC52}{C1_CSI}"
