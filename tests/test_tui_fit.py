"""Every screen at 80×24: the footer's keys all visible, nothing cut at a container's edge, no word
running into a border, and the first item of each list highlighted on arrival.

Each scenario opens one screen the way a learner would reach it (keys from home where possible)
on a fresh profile with four hand-written runs; tests/screen_checks.py says what "fits" means.
"""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, OptionList

from minigpt import paths
from tests import waiting
from tests.run_fixtures import write_course_runs
from tests.screen_checks import all_problems
from tui import navigation

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
        await settle(pilot, lambda: pilot.app.screen.position_restored)
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
    from minigpt.experiments import folder as ef
    from minigpt.experiments.presets import custom_spec, parse_grid_text

    grid = parse_grid_text("d_model=8,16 dropout=0,0.1 steps=30 n_layers=1 n_heads=2")
    exp = ef.create_experiment(custom_spec("custom", grid.axes, grid.budget, grid.base))
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


@pytest.fixture
def app(make_app):
    write_course_runs(paths.runs_dir())
    return make_app()


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_screen_fits_80x24(app, scenario):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await SCENARIOS[scenario](pilot)
        problems = all_problems(app)
        assert not problems, f"{scenario} at 80×24 ({type(app.screen).__name__}):\n" + "\n".join(problems)


@pytest.mark.parametrize("scenario", ["home", "lessons", "quiz", "explorer menu", "runs", "compare runs",
                                      "playground"])
async def test_first_item_highlighted_on_arrival(app, scenario):
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await SCENARIOS[scenario](pilot)
        lists = [w for w in app.screen.query(OptionList) if w.display]
        tables = [w for w in app.screen.query(DataTable) if w.display and w.row_count]
        assert lists or tables, "no list on this screen"
        focused = app.screen.focused
        assert focused in lists + tables, f"the list does not have the focus ({focused!r})"
        if isinstance(focused, OptionList):
            assert focused.highlighted == 0
        else:
            assert focused.cursor_row == 0
