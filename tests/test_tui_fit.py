"""Every screen at 80×24, each reached once (one app per scenario) and checked on that one pilot:
it fits (the footer's keys all visible, nothing cut at a container's edge, no word running into a
border), the first item of its list has the focus on arrival (list screens), it looks like its
picture (PICTURES, tests/__snapshots__/test_tui_fit/), and shrunk to a sliver it gives way to the
too-small message, coming back when the terminal grows again.

Each scenario opens one screen the way a learner would reach it (keys from home where possible)
on a fresh profile with five hand-written runs; tests/helpers/screen_checks.py says what "fits" means.
The same pictures in 16 ANSI colours, under load, are the soak tier's (tests/test_tui_snapshots.py).
After a deliberate change of a screen:

    pytest tests/test_tui_fit.py tests/test_tui_snapshots.py -m "soak or not soak" --snapshot-update

then look at the new SVGs (a browser opens them) before committing them.
"""

from __future__ import annotations

import pytest

from tests.helpers.screen_checks import all_problems
from tests.helpers.screen_walk import (
    LISTS,
    PICTURES,
    SCENARIOS,
    SIZE,
    course_world,
    first_item_problem,
    looks_like_its_picture,
    settle,
    shrinks_to_the_message_and_back,
)


@pytest.fixture
def world(request, monkeypatch, isolated_data_dir):
    # A screen without a picture is checked in a plain xterm's colours, whatever terminal the suite
    # runs in (heatmaps draw glyphs where colours are few, so the colours pick the layout checked:
    # left to the terminal, a clone passed in one and failed in another).
    scenario = request.node.callspec.params["scenario"]
    with course_world(monkeypatch, isolated_data_dir, scenario, "default" if scenario in PICTURES else "xterm") as data:
        yield data


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_every_screen(world, make_app, snap_compare, monkeypatch, scenario):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await SCENARIOS[scenario](pilot)
        problems = all_problems(app)
        assert not problems, f"{scenario} at 80×24 ({type(app.screen).__name__}):\n" + "\n".join(problems)
        if scenario in LISTS:
            problem = first_item_problem(app.screen)
            assert problem is None, f"{scenario}: {problem}"
        if scenario in PICTURES:
            assert await looks_like_its_picture(pilot, snap_compare, monkeypatch)
        await shrinks_to_the_message_and_back(pilot)
