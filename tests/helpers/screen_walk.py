"""The walk through every screen: one scenario per screen (how a learner reaches it, keys from
home where possible), the world it runs in (hand-written runs, a fresh profile, a frozen clock, fixed
colours) and the checks made on its one pilot. Used by tests/test_tui_fit.py (the default tier) and
tests/test_tui_snapshots.py (the 16-colour pictures, soak)."""

from __future__ import annotations

import calendar
import fcntl
import shutil
import tempfile
import time as real_time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import SimpleNamespace

from textual import _doc as textual_doc
from textual.widgets import DataTable, Input, OptionList

from minigpt import paths
from tests.helpers import waiting
from tests.helpers.run_fixtures import write_course_runs, write_run
from tui import navigation
from tui.home.too_small import TooSmallScreen

SIZE = (80, 24)


async def settle(pilot, until=lambda: True, timeout: float = 60.0) -> None:
    """Let workers finish: pause until ``until()`` holds (then once more for the repaint)."""
    await pilot.pause()
    await waiting.until(pilot, until, timeout, "the screen's workers to finish")
    await pilot.pause()


def playground_ready(app) -> bool:
    return getattr(app.screen, "batch", None) is not None


async def open_playground(pilot, *keys):
    await pilot.press("p")
    await settle(pilot, lambda: playground_ready(pilot.app))
    for key in keys:
        await pilot.press(key)
    await settle(pilot, lambda: getattr(pilot.app.screen, "columns", True) != [])


def lesson(lesson_id):
    async def go(pilot):
        pilot.app.open_lesson(lesson_id)
        # its place restored and its worked examples filled in (from the cache or a child): the same picture every time
        await settle(pilot, lambda: pilot.app.screen.position_restored and pilot.app.screen.examples_filled)
    return go


def keys(*pressed, wait=lambda app: True):
    async def go(pilot):
        for key in pressed:
            await pilot.press(key)
            await pilot.pause()
        await settle(pilot, lambda: wait(pilot.app))
    return go


def screen(name, *args, wait=lambda app: True, then=(), **kwargs):
    async def go(pilot):
        navigation.open_screen(pilot.app, name, *args, **kwargs)
        await settle(pilot, lambda: wait(pilot.app))
        for key in then:
            await pilot.press(key)
        await settle(pilot, lambda: wait(pilot.app))
    return go


async def trained_long_name(pilot):
    navigation.open_screen(pilot.app, "explorer.trained")
    scr = pilot.app.screen
    await settle(pilot, lambda: scr.maps is not None)
    scr.query_one("#tr-name").value = "alexandra"
    await settle(pilot, lambda: len(scr.labels) == 10)
    await pilot.press("enter")
    await settle(pilot)


async def positions_wide(pilot):
    navigation.open_screen(pilot.app, "explorer.positions")
    await settle(pilot)
    pilot.app.screen.query_one("#pe-shape").value = "16 12"
    await settle(pilot)


def shipped_model_in(name):
    """An explorer with the shipped MiniGPT loaded through ctrl+l's picker (its first row)."""
    async def go(pilot):
        navigation.open_screen(pilot.app, name)
        await settle(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, lambda: getattr(pilot.app.screen, "model", None) is not None)
    return go


async def training_panel(pilot):
    run = paths.runs_dir() / "20260105-100200"
    navigation.open_screen(pilot.app, "training", run_dir=run)
    await settle(pilot, lambda: pilot.app.screen.panel.state is not None)


async def experiment_planned(pilot):
    from minigpt.experiments import folder
    from minigpt.experiments.presets import custom_spec, parse_grid_text

    grid = parse_grid_text("d_model=8,16 dropout=0,0.1 steps=30 n_layers=1 n_heads=2")
    exp = folder.create_experiment(custom_spec("custom", grid.axes, grid.budget, grid.base))
    navigation.open_screen(pilot.app, "experiment", exp.dir)
    await settle(pilot, lambda: getattr(pilot.app.screen, "results", None) is not None)


SCENARIOS = {
    "home": keys(),
    "help": keys("question_mark"),
    "lessons": keys("l"),
    "lesson without snippets or quiz": lesson("bahdanau-to-self-attention"),
    "lesson with snippets and quiz": lesson("query-key-value"),
    "lesson with snippets, quiz and an explorer": lesson("scaled-dot-product"),
    "lesson with snippets, quiz, explorer and katas": lesson("four-token-example"),
    "lesson with snippets, quiz, explorer and experiments": lesson("exercises"),
    "flashcards": keys("f", wait=lambda app: app.screen.query("#card-front") is not None),
    "quiz": keys("q"),
    "study stats": keys("s"),
    "stepper": keys("a"),
    "stepper at softmax": keys("a", "n", "n", "n", "n", "n"),
    "explorer menu": keys("a", "o"),
    "explorer scaling": screen("explorer.scaling", wait=lambda app: bool(app.screen.demos)),
    "explorer positions": screen("explorer.positions"),
    "explorer positions 16 12": positions_wide,
    "explorer norms": screen("explorer.norms"),
    "explorer params": screen("explorer.params"),
    "explorer trained": screen("explorer.trained", wait=lambda app: app.screen.maps is not None),
    "explorer trained, 9-letter name, head focused": trained_long_name,
    "explorer tokens": screen("explorer.tokens"),
    "explorer positions, shipped model": shipped_model_in("explorer.positions"),
    "explorer norms, shipped model": shipped_model_in("explorer.norms"),
    "explorer tokens, shipped model": shipped_model_in("explorer.tokens"),
    "explorer scaling, shipped model": shipped_model_in("explorer.scaling"),
    "training form": keys("t"),
    "training panel": training_panel,
    "runs": screen("runs"),
    "compare runs": screen("compare_runs", wait=lambda app: bool(app.screen.curves)),
    "playground": open_playground,
    "experiments": keys("e"),
    "experiments custom grid": keys("e", "c", *"d_model=8,16 steps=20"),
    "experiments asking": keys("e", "c", *"d_model=8,16 steps=20", "enter"),
    "experiment": experiment_planned,
    "playground step": lambda pilot: open_playground(pilot, "i"),
    "playground score": lambda pilot: open_playground(pilot, "o"),
    "playground sweep": lambda pilot: open_playground(pilot, "w"),
    "playground compare": lambda pilot: open_playground(pilot, "c"),
}


# The screens whose pictures are kept; the soak tier takes them again in 16 colours, under load.
PICTURES = ["home", "help", "lessons", "lesson with snippets and quiz", "quiz", "stepper at softmax",
            "explorer norms", "explorer trained", "training form", "training panel", "runs", "compare runs",
            "playground", "playground step", "experiments", "experiments custom grid", "experiment"]
LISTS = ["home", "lessons", "quiz", "explorer menu", "runs", "compare runs", "playground"]  # focus on arrival
# Widths the home screen's first layout once crashed at (10–30 columns), and a short one.
SLIVERS = [(30, 8), (10, 8), (20, 24)]

# The runs screen prints the data folder: its picture needs the same path on every run and machine,
# so that scenario uses this fixed folder (locked: two xdist workers, or two pytest runs, take turns);
# every other scenario uses a folder of its own, so the walk spreads freely over workers.
DATA = Path(tempfile.gettempdir()) / "minigpt-tutor-snapshots"
FOLDER_ON_SCREEN = {"runs"}
NOW = calendar.timegm(real_time.strptime("2026-01-05 12:00:00", "%Y-%m-%d %H:%M:%S"))  # 2 h after the runs began
COLOURS = {"default": {"TERM": "xterm-256color", "COLORTERM": "truecolor"},
           "ansi16": {"TERM": "xterm-16color", "COLORTERM": ""},
           "xterm": {"TERM": "xterm", "COLORTERM": ""}}


@contextmanager
def fixed_data_folder():
    with open(DATA.with_name(DATA.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if the test fails
        shutil.rmtree(DATA, ignore_errors=True)
        DATA.mkdir(parents=True)
        try:
            yield DATA
        finally:
            shutil.rmtree(DATA, ignore_errors=True)


@contextmanager
def course_world(monkeypatch, own_folder: Path, scenario: str, colours: str | None):
    """The course's runs (four plus a rerun) in the scenario's data folder, the clock that run ages
    and sampling times read frozen at 12:00 that day, and the terminal's colours set to ``colours``
    (None: the terminal's own): everything a picture shows is then the same on every run."""
    if colours is not None:
        for name, value in COLOURS[colours].items():
            if value:
                monkeypatch.setenv(name, value)
            else:
                monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv("NO_COLOR", raising=False)
    from minigpt.playground import generation
    from minigpt.runs import listing

    with ExitStack() as stack:
        data = stack.enter_context(fixed_data_folder()) if scenario in FOLDER_ON_SCREEN else own_folder
        monkeypatch.setenv("MINIGPT_DATA_DIR", str(data))
        write_course_runs(paths.runs_dir())
        write_run(paths.runs_dir(), "20260105-100400", lr=2.5e-3, seed=11, best_val=2.01)
        monkeypatch.setattr(listing, "time", SimpleNamespace(time=lambda: NOW))
        monkeypatch.setattr(generation, "time", SimpleNamespace(perf_counter=lambda: 0.0, strftime=real_time.strftime))
        yield data


async def looks_like_its_picture(pilot, snap_compare, monkeypatch) -> bool:
    """The screen as it stands, compared with its SVG once nothing on it still changes."""
    from tui.common.loss_chart import LossChart

    app = pilot.app
    for field in app.screen.query(Input):
        field.cursor_blink = False  # a blinking cursor would make the picture depend on timing
    charts = list(app.screen.query(LossChart))
    # Charts redraw on a timer: wait until each has drawn its latest data at its laid-out size.
    await waiting.until(pilot, lambda: not any(c._dirty or c.size != c._last_size for c in charts),
                        60, "every chart to draw")
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    svg = app.export_screenshot(title=app.title, simplify=True)
    # snap_compare would start an app of its own; handing it this pilot's picture keeps its
    # comparison, --snapshot-update and its HTML report of differences.
    monkeypatch.setattr(textual_doc, "take_svg_screenshot", lambda **_: svg)
    return snap_compare(app, terminal_size=SIZE)


async def shrinks_to_the_message_and_back(pilot) -> None:
    app = pilot.app
    reached = app.screen
    for width, height in SLIVERS:
        await pilot.resize_terminal(width, height)
        await waiting.until(pilot, lambda: isinstance(app.screen, TooSmallScreen), 30,
                            f"the resize message at {width}×{height}")
        text = str(app.screen.query_one("#too-small-text").render())
        assert "80×24" in text and f"{width}×{height}" in text, text
    await pilot.resize_terminal(*SIZE)
    await waiting.until(pilot, lambda: app.screen is reached, 30, f"{type(reached).__name__} again")


def first_item_problem(screen) -> str | None:
    lists = [w for w in screen.query(OptionList) if w.display]
    tables = [w for w in screen.query(DataTable) if w.display and w.row_count]
    focused = screen.focused
    if not lists + tables:
        return "no list on this screen"
    if focused not in lists + tables:
        return f"the list does not have the focus ({focused!r})"
    row = focused.highlighted if isinstance(focused, OptionList) else focused.cursor_row
    return None if row == 0 else f"{focused!r} starts at row {row}, not the first"
