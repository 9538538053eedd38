"""Pictures of the main screens at 80×24, in the default theme (256 colours and more) and in 16
ANSI colours, compared with SVGs that were looked at before they were committed
(tests/__snapshots__/test_tui_snapshots/). After a deliberate change of a screen:

    pytest tests/test_tui_snapshots.py --snapshot-update

then look at the new SVGs (a browser opens them) before committing them.

Deterministic: a fixed data folder with hand-written runs, a fresh progress database, a frozen
clock for run ages and sampling times, fixed seeds everywhere (the playground's default is 42).
"""

from __future__ import annotations

import calendar
import shutil
import tempfile
import time as real_time
from pathlib import Path
from types import SimpleNamespace

import pytest
from textual.widgets import Input

from minigpt.store import Store
from tests.run_fixtures import write_course_runs, write_run
from tests.test_tui_fit import SCENARIOS
from tests.waiting import until

# A fixed place, so no path that differs between runs appears on a screen (the runs list shows it).
DATA = Path(tempfile.gettempdir()) / "minigpt-tutor-snapshots"
NOW = calendar.timegm(real_time.strptime("2026-01-05 12:00:00", "%Y-%m-%d %H:%M:%S"))  # 2 h after the runs began

SCREENS = ["home", "help", "lessons", "lesson with snippets and quiz", "quiz", "stepper at softmax",
           "explorer norms", "explorer trained", "training form", "training panel", "runs", "compare runs",
           "playground", "playground step", "experiments", "experiments custom grid", "experiment"]
pytestmark = pytest.mark.usefixtures("cpu_load")  # the pictures must not depend on an idle machine
COLOURS = {"default": {"TERM": "xterm-256color", "COLORTERM": "truecolor"},
           "ansi16": {"TERM": "xterm-16color", "COLORTERM": ""}}


@pytest.fixture
def fixed_world(monkeypatch):
    shutil.rmtree(DATA, ignore_errors=True)
    DATA.mkdir(parents=True)
    monkeypatch.setenv("MINIGPT_DATA_DIR", str(DATA))
    monkeypatch.delenv("NO_COLOR", raising=False)
    from minigpt import paths
    from minigpt.playground import generation
    from minigpt.runs import listing

    write_course_runs(paths.runs_dir())
    write_run(paths.runs_dir(), "20260105-100400", lr=2.5e-3, seed=11, best_val=2.01)
    # Run ages and sampling times read the clock: freeze what these modules see of it.
    monkeypatch.setattr(listing, "time", SimpleNamespace(time=lambda: NOW))
    monkeypatch.setattr(generation, "time", SimpleNamespace(perf_counter=lambda: 0.0, strftime=real_time.strftime))
    yield
    shutil.rmtree(DATA, ignore_errors=True)


@pytest.mark.parametrize("colours", list(COLOURS))
@pytest.mark.parametrize("screen", SCREENS)
def test_screen_snapshot(snap_compare, fixed_world, monkeypatch, screen, colours, make_app):
    for name, value in COLOURS[colours].items():
        if value:
            monkeypatch.setenv(name, value)
        else:
            monkeypatch.delenv(name, raising=False)
    app = make_app(store=Store(DATA / "progress.sqlite3"))

    async def reach(pilot):
        await pilot.pause()
        await SCENARIOS[screen](pilot)
        for field in pilot.app.screen.query(Input):
            field.cursor_blink = False  # a blinking cursor would make the picture depend on timing
        await pilot.pause(0.6)  # charts redraw on a timer (three times a second)
        from tui.widgets.loss_chart import LossChart

        # a loaded machine can miss a tick: wait until every chart has drawn
        await until(pilot, lambda: not any(chart._dirty for chart in pilot.app.screen.query(LossChart)),
                    60, "every chart to draw")
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=(80, 24), run_before=reach)

