"""An error about a path with a line break in it: one `Error:` line that still says why (the
first line of the message used to be all that was shown, cut inside the path)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from minigpt.cli import main
from minigpt.cli.support import _fail
from minigpt.errors import DatasetError
from tests.helpers.hostile import one_error_line


def test_fail_keeps_the_reason_after_a_line_break_in_a_path():
    error = _fail(DatasetError("/tmp/a\nb/names.txt: fewer than 3 names"))
    assert error.message == "/tmp/a␊b/names.txt: fewer than 3 names"


def test_a_dataset_in_a_folder_with_a_line_break_names_the_reason(tmp_path):
    folder = tmp_path / "evil\nfolder"
    folder.mkdir()
    (folder / "names.txt").write_text("ab\n", encoding="utf-8")  # too few names
    line = one_error_line(CliRunner().invoke(main, ["train", "--data", str(folder / "names.txt"), "--steps", "1"]))
    assert "evil␊folder/names.txt" in line
    assert "need at least 3" in line  # the reason, after the line break, is kept


def test_a_run_name_with_a_carriage_return_and_escape_in_a_missing_run(tmp_path):
    """Not tried by the sweep: a name that would rewrite the terminal line, in a refusal."""
    line = one_error_line(CliRunner().invoke(main, ["stop", str(Path(tmp_path) / "x\r\x1b[2Jy")]))
    assert "\x1b" not in line and "\r" not in line and "␍" in line


async def test_the_app_notice_keeps_the_reason_too(make_app):
    from tui.workers import report_failure

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        report_failure(app, "Loading the deck", OSError("/tmp/a\nb/deck.toml: permission denied"))
        await pilot.pause()
        shown = [n.message for n in app._notifications]
        assert any("a␊b/deck.toml: permission denied" in m for m in shown), shown
