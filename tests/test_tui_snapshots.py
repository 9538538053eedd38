"""The soak tier's pictures: the screens of tests/test_tui_fit.py's PICTURES again in 16 ANSI
colours, with every core kept busy, compared with SVGs that were looked at before they were
committed (tests/__snapshots__/test_tui_snapshots/), and their fit in those colours (heatmaps
draw glyphs there: a layout of their own). The default tier takes each picture once, in the
default theme, on its walk through every screen (tests/test_tui_fit.py, which also says how to
update them after a deliberate change).

Deterministic as the walk's: the same world (hand-written runs, a fresh progress database, a
frozen clock for run ages and sampling times, fixed seeds everywhere) and the same wait for every
chart to draw before the picture; the load checks that the picture never depends on an idle machine.
"""

from __future__ import annotations

import pytest

from tests.helpers.screen_checks import all_problems
from tests.helpers.screen_walk import PICTURES, SCENARIOS, SIZE, course_world, looks_like_its_picture, settle

pytestmark = pytest.mark.soak


@pytest.fixture
def world(request, monkeypatch, isolated_data_dir):
    params = request.node.callspec.params
    with course_world(monkeypatch, isolated_data_dir, params["scenario"], params["colours"]) as data:
        yield data


@pytest.mark.parametrize("colours", ["ansi16"])
@pytest.mark.parametrize("scenario", PICTURES)
async def test_screen_snapshot(world, cpu_load, make_app, snap_compare, monkeypatch, scenario, colours):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await SCENARIOS[scenario](pilot)
        problems = all_problems(app)
        assert not problems, f"{scenario} at 80×24 in 16 colours:\n" + "\n".join(problems)
        assert await looks_like_its_picture(pilot, snap_compare, monkeypatch)
