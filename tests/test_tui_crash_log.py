"""An unexpected error that closes the app leaves its cause: the traceback in app.log, and one
line on the terminal naming the log once the app has exited."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from tui.app import TutorApp
from tui.cli import main
from tui.launch import crash_line
from tui.workers import log_path


class FaultyScreen(Screen):
    """A screen whose key handler has a bug."""

    BINDINGS = [Binding("x", "explode", "Explode")]

    def compose(self):
        yield Static("press x")

    def action_explode(self) -> None:
        raise RuntimeError("a bug in a key handler")


async def test_an_error_in_a_handler_goes_to_the_log_with_its_traceback(app):
    with pytest.raises(RuntimeError, match="a bug in a key handler"):
        async with app.run_test(size=(80, 24)) as pilot:
            await app.push_screen(FaultyScreen())
            await pilot.press("x")
            await pilot.pause()
    assert isinstance(app.crash, RuntimeError)
    log = log_path().read_text(encoding="utf-8")
    assert "--- The app failed" in log and "Traceback (most recent call last)" in log
    assert "action_explode" in log and "RuntimeError: a bug in a key handler" in log
    line = crash_line(app.crash, True)
    assert "\n" not in line and str(log_path()) in line and "RuntimeError: a bug in a key handler" in line


def test_the_command_names_the_log_in_one_line_after_the_app_exits(tmp_path, monkeypatch):
    def broken_mount(self) -> None:
        raise ValueError("broken on mount\nsecond line of the message")

    monkeypatch.setattr(TutorApp, "on_mount", broken_mount)
    monkeypatch.setattr(TutorApp, "run", lambda self, **kw: App.run(self, headless=True, size=(80, 24)))
    data = tmp_path / "data"
    result = CliRunner().invoke(main, ["--data-dir", str(data)])
    assert result.exit_code == 1, result.output
    log = data / "app.log"
    assert log.is_file()
    text = log.read_text(encoding="utf-8")
    assert "broken_mount" in text and "ValueError: broken on mount" in text
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    assert lines == [f"minigpt-tutor stopped on an unexpected error (ValueError: broken on mount); "
                     f"the details are in {log}"], result.stderr
    assert "Traceback" not in result.output  # the traceback is in the log, not on the terminal
