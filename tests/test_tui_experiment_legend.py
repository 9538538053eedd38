"""The experiment's curves at 80×24 with one run and with five (the issue found five with no legend
and one with its legend clipped): every finished run's curve is drawn with its own marker, and the
legend under the chart names each one, whole, inside the screen."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from minigpt.experiments import folder
from minigpt.experiments.spec import Axis, Budget, ExperimentSpec
from tests.helpers.run_fixtures import fake_run
from tests.helpers.screen_checks import all_problems
from tests.helpers.waiting import until
from tui import navigation
from tui.common.loss_chart import LossChart

WORDS = ["abcd", "bcda", "cdab", "dabc", "aabb", "bbcc", "ccdd", "ddaa", "abab", "cdcd"]


def _experiment(tmp_path, values):
    data = tmp_path / "w.txt"
    data.write_text("\n".join(WORDS), encoding="utf-8")
    spec = ExperimentSpec(name="legend", axes=[Axis("d_model", tuple(values))], budget=Budget("steps", 40),
                          kind="size", derive="scaling")
    exp = folder.create_experiment(spec, root=tmp_path / "runs", data=str(data))
    for i, run in enumerate(exp.runs):
        fake_run(exp, run.name, "finished", 40, 2.6 - 0.1 * i, train=2.5 - 0.1 * i)
    return exp


@pytest.mark.parametrize("values", [(16,), (8, 16, 32, 64, 128)], ids=["1 run", "5 runs"])
async def test_the_curves_legend_names_every_run_at_80x24(tmp_path, make_app, values):
    exp = _experiment(tmp_path, values)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        navigation.open_screen(app, "experiment", exp.dir)
        await until(pilot, lambda: getattr(app.screen, "results", None) is not None, 30, "the experiment's results")
        screen = app.screen
        await pilot.press("2")
        chart = screen.query_one("#exp-curves", LossChart)
        legend = screen.query_one("#exp-curves-legend", Static)
        # The curves tab lays out, then the chart draws on its timer: wait for both.
        await until(pilot, lambda: len(chart.drawn) == len(values) and not chart._dirty and legend.region.height >= 1,
                    30, "the curves tab to show every run's curve and the legend")
        assert len(chart.drawn) == len(values)
        text = str(legend.render())
        markers = [chart.series[run.name].marker for run in exp.runs]
        assert len(set(markers)) == len(values)  # one marker per run
        for run, marker in zip(exp.runs, markers):
            assert f"{marker} d_model={run.values['d_model']}" in text, text
        region = legend.region
        assert region.height >= 1 and region.bottom <= app.size.height and region.right <= app.size.width
        lines = [str(legend.render_line(y).text).rstrip() for y in range(region.height)]
        for run in exp.runs:  # wholly on screen, not cut by the legend's height
            assert any(f"d_model={run.values['d_model']}" in line for line in lines), lines
        assert all_problems(app) == []
