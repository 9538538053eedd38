"""Time zones Python cannot represent (issue 44 item 7): `TZ=UTC-99 minigpt plan` ended in
"offset must be a timedelta strictly between …", and the app's flashcards ended the app. A zone
with an offset of a day or more is now replaced by UTC with one warning, in the CLI and the app."""

from __future__ import annotations

import os
import time
from datetime import UTC, date, datetime, timedelta

import pytest
from click.testing import CliRunner

from minigpt.cli import main
from minigpt.skipped_rows import take_skipped_note
from minigpt.study import days, scheduler

UNUSABLE = ["UTC+24", "UTC-24", "UTC-99", "<+99>-99", "<-30>30"]


@pytest.fixture
def zone(monkeypatch):
    """Set the process's time zone (and forget any earlier warning); restored afterwards."""
    from tui import saving

    monkeypatch.setattr(days, "_zone_problem", None)
    monkeypatch.setattr(saving, "_told", set())
    take_skipped_note()

    def use(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    yield use
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("name", UNUSABLE)
def test_the_library_counts_days_in_utc_and_says_why(zone, name):
    zone(name)
    now = datetime(2026, 12, 3, 13, 0, tzinfo=UTC)
    assert days.local(now) == now
    assert days.start_of_local_day(now) == datetime(2026, 12, 3, tzinfo=UTC)
    assert days.start_of_next_local_day(now) == datetime(2026, 12, 4, tzinfo=UTC)
    assert scheduler.describe_time(now + timedelta(days=1), now) == "tomorrow at 13:00"
    assert f"TZ={name!r} cannot be used" in days.zone_warning()
    assert "days are counted in UTC" in days.zone_warning()


@pytest.mark.parametrize("name", ["UTC-99", "<+99>-99", "UTC+24"])
def test_plan_falls_back_to_utc_with_one_warning(zone, isolated_data_dir, name):
    zone(name)
    result = CliRunner().invoke(main, ["plan", "--date", (date.today() + timedelta(days=20)).isoformat()])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and result.exception is None
    warnings = [line for line in result.output.splitlines() if "days are counted in UTC" in line]
    assert len(warnings) == 1 and warnings[0].startswith("note: the time zone TZ="), result.output


@pytest.mark.parametrize("name", ["UTC-2", "Europe/Berlin", "garbage"])
def test_a_usable_zone_gives_no_warning(zone, isolated_data_dir, name):
    zone(name)
    days.local(None), days.start_of_local_day(None)
    assert days.zone_warning() is None
    result = CliRunner().invoke(main, ["plan", "--date", (date.today() + timedelta(days=20)).isoformat()])
    assert result.exit_code == 0 and "note:" not in result.output, result.output


async def test_the_apps_flashcards_and_home_count_in_utc_and_warn_once(zone, make_app, quick_decks):
    from textual.widgets import Static

    from tests.helpers.waiting import until
    from tui.study.flashcards import FlashcardsScreen

    zone("UTC-99")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: "Cards to study" in str(app.screen.query_one("#glance", Static).render()))
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, FlashcardsScreen) and app.screen.session is not None)
        assert "New " in str(app.screen.query_one("#fc-counts", Static).render())
        told = [n.message for n in app._notifications if "days are counted in UTC" in n.message]
        assert len(told) == 1, [n.message for n in app._notifications]
    assert os.environ["TZ"] == "UTC-99"
