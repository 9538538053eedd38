"""The compare view's seed groups with Pilot: g draws each group as a band and compares the
first two (paired t-test: the same seeds), within 80×24."""

from __future__ import annotations

from minigpt import paths
from tests.helpers.run_fixtures import grouped_run, time_budget_groups
from tests.helpers.screen_checks import all_problems
from tests.helpers.waiting import until
from tui import navigation


async def test_groups_drawn_as_bands_and_compared(make_app):
    app = make_app()
    root = paths.runs_dir()
    for seed, (a, b) in zip((1, 2, 3), ((2.00, 2.10), (2.02, 2.13), (2.04, 2.13)), strict=True):
        grouped_run(root, f"a{seed}", "lr 5e-3 ×3", seed, a)
        grouped_run(root, f"b{seed}", "lr 1e-2 ×3", seed, b)
    async with app.run_test(size=(80, 24)) as pilot:
        navigation.open_screen(app, "compare_runs")
        screen = app.screen
        await until(pilot, lambda: screen.shown and len(screen.curves) == len(screen.shown), 30, "the runs' curves")
        await pilot.press("g")
        await until(pilot, lambda: screen.groups and not screen._loading_bands, 30, "the groups' bands")
        assert [g.name for g in screen.groups] == ["lr 5e-3 ×3", "lr 1e-2 ×3"] or \
            [g.name for g in screen.groups] == ["lr 1e-2 ×3", "lr 5e-3 ×3"]
        chart = screen.query_one("#compare-chart")
        name = screen.groups[0].name
        # The chart redraws on a timer: wait until it has drawn the band.
        await until(pilot, lambda: {f"{name}:mean", f"{name}:low", f"{name}:high"} <= set(chart.drawn)
                    and not chart._dirty, 30, "the chart to draw the first group's band")
        band = screen.bands[name]
        assert all(lo <= m <= hi for lo, m, hi in zip(band.low, band.mean, band.high, strict=True))
        legend = str(screen.query_one("#compare-legend").render())
        assert "paired p = " in legend and ": real" in legend
        assert all_problems(app) == []
        await pilot.press("g")
        assert not screen.group_mode


async def test_time_budget_groups_show_their_finals_and_the_seeds_needed(make_app):
    app = make_app()
    time_budget_groups(paths.runs_dir())
    async with app.run_test(size=(80, 24)) as pilot:
        navigation.open_screen(app, "compare_runs", groups=True)
        screen = app.screen
        await until(pilot, lambda: screen.groups and not screen._loading_bands, 30, "the groups' bands")
        chart = screen.query_one("#compare-chart")
        name = screen.groups[0].name
        # Each seed stopped at its own step: the band is drawn over the budget, not left empty.
        await until(pilot, lambda: f"{name}:mean" in chart.drawn and not chart._dirty, 30, "the band drawn")
        assert screen.bands[name].axis == "budget"
        legend = str(screen.query_one("#compare-legend").render())
        assert "N 3" in legend and "val 2.020 ± 0.0058" in legend and "test 2.000 ± " in legend
        assert chart.xlabel == "fraction of the time budget"
        assert "seeds/group detect it" in legend and "paired p = " in legend
        assert all_problems(app) == []
