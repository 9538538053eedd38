"""The experiments lab driven with Pilot at 80×24: a 2×2 sweep of tiny runs started from the app and
followed to the end (the plot shows finished runs only), the lesson's key, and `minigpt watch`.

The app's sweep runs the torch-free fake trainer (``fake_trainer``): the screens read run folders
only, and the real trainer's 2×2 sweep is tests/test_experiments_scheduler.py's CLI test."""

from __future__ import annotations

import os

from click.testing import CliRunner
from textual.widgets import DataTable, Footer, Input, OptionList, Static, TabbedContent

from minigpt.experiments import folder
from minigpt.experiments.presets import custom_spec, parse_grid_text
from minigpt.runs.files import write_json_atomic
from tests.helpers.screen_checks import all_problems
from tests.helpers.waiting import until
from tui.common.loss_chart import LossChart
from tui.experiments.experiment_plot import PlotCanvas

GRID = "d_model=8,16 dropout=0,0.1 steps=30 n_layers=1 n_heads=2 batch_size=32 device=cpu"


def screen_name(app) -> str:
    return type(app.screen).__name__


def inside(app, widget) -> bool:
    """The widget is drawn and lies wholly on an 80×24 screen."""
    r = widget.region
    return r.width > 0 and r.height > 0 and r.right <= app.size.width and r.bottom <= app.size.height


async def test_a_2x2_sweep_from_the_lab_runs_to_the_end_at_80x24(tmp_path, make_app, fake_trainer):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        assert screen_name(app) == "ExperimentsScreen"
        await pilot.press("c")
        custom = app.screen.query_one("#lab-custom", Input)
        assert app.focused is custom
        custom.value = GRID
        await pilot.press("enter")  # asks first, as the training form does
        await pilot.pause()
        assert screen_name(app) == "StartSweepScreen"
        await pilot.press("y")
        await until(pilot, lambda: screen_name(app) == "ExperimentScreen", 20, "the experiment screen", step=0.2)
        screen = app.screen
        assert screen.experiment.name == "custom"
        for widget_id in ("#exp-summary", "#exp-tabs", "#exp-plot-canvas"):
            assert inside(app, screen.query_one(widget_id)), widget_id
        assert inside(app, screen.query_one(Footer))
        canvas = screen.query_one(PlotCanvas)
        await until(pilot, lambda: canvas.plot is not None, 20, "the plot")

        def finished_with_only_finished_runs_plotted() -> bool:
            # Until the end, the plot never shows a point for a run that has not finished.
            res = screen.results
            assert canvas.plot is not None and canvas.plot.n_points == len(res.finished)
            return res.state == "finished"

        await until(pilot, finished_with_only_finished_runs_plotted, 300, "the sweep to finish", step=0.5,
                    describe=lambda: screen.results.state)
        def plotted() -> bool:
            text = canvas.text
            return text.count("●") + text.count("x ") >= 2 and "log-log" in text

        await until(pilot, plotted, 20, "the finished runs on the log-log plot", describe=lambda: canvas.text)
        await pilot.press("1")
        await pilot.pause()
        assert screen.query_one(TabbedContent).active == "runs"
        table = screen.query_one("#exp-table", DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert [r[-1] for r in rows] == ["finished"] * 4 and [r[0] for r in rows] == ["8", "8", "16", "16"]
        assert inside(app, table)
        await pilot.press("2")
        chart = screen.query_one("#exp-curves", LossChart)
        await until(pilot, lambda: len(chart.drawn) == 4 and all(len(xs) >= 2 for xs, _ in chart.drawn.values()),
                    20, "every run's curve", describe=lambda: str({k: len(xs) for k, (xs, _) in chart.drawn.items()}))
        legend = screen.query_one("#exp-curves-legend", Static)
        text = str(legend.render())
        assert "d_model=8 dropout=0" in text and text.count("=16") == 2  # every run, by its axis values
        assert inside(app, legend) and all_problems(app) == []  # not clipped at 80×24
        await pilot.press("e")
        await pilot.pause()
        assert (screen.exp_dir / "results.md").exists() and (screen.exp_dir / "plot.txt").exists()
        assert screen.check_action("pause", ()) is False  # nothing left to pause
        await pilot.press("escape")

        def lab_row() -> list[str]:
            tables = app.screen.query("#lab-table")
            if not tables or not tables.first(DataTable).row_count:
                return []
            return [str(c) for c in tables.first(DataTable).get_row_at(0)][:3]

        await until(pilot, lambda: lab_row() == ["finished", "custom", "4/4"], 20, "the lab's row for the sweep",
                    describe=lambda: str(lab_row()))


async def test_the_exercises_lesson_opens_the_lab_on_its_presets(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.open_lesson("exercises")
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        assert screen_name(app) == "ExperimentsScreen"
        assert app.screen.order[:4] == ["model_size", "dropout", "positions", "scaling_law"]
        await pilot.press("2")
        await pilot.pause()
        assert app.screen.query_one(OptionList).highlighted == 1
        plan = str(app.screen.query_one("#lab-plan", Static).render())
        assert "Dropout" in plan and "5 runs" in plan
        # the temperature sweep (the last choice) stays in the playground: the lab links to it
        await pilot.press(str(len(app.screen.order)))
        await pilot.pause()
        assert "playground" in str(app.screen.query_one("#lab-plan", Static).render())


def test_watch_opens_an_experiment_by_name_or_as_the_latest_run(monkeypatch):
    import tui.launch
    from tui.cli import main

    grid = parse_grid_text("d_model=8,16 steps=5 n_layers=1 n_heads=2")
    exp = folder.create_experiment(custom_spec("w", grid.axes, grid.budget, grid.base))
    opened = {}
    monkeypatch.setattr(tui.launch, "run_app", lambda **kw: opened.update(kw))
    assert CliRunner().invoke(main, ["watch", "w"]).exit_code == 0
    assert opened["initial"] == f"experiment:{exp.dir.resolve()}"
    run_dir = exp.dir / exp.runs[0].name
    run_dir.mkdir()
    write_json_atomic(run_dir / "status.json", {"state": "finished", "started_at": "2099-01-01T00:00:00+00:00"})
    opened.clear()
    assert CliRunner().invoke(main, ["watch"]).exit_code == 0
    assert opened["initial"] == f"experiment:{exp.dir.resolve()}"
    opened.clear()
    assert CliRunner().invoke(main, ["watch", exp.runs[0].name]).exit_code == 0  # one run, by its name
    assert opened["initial"] == f"run:{run_dir.resolve()}"


async def test_a_served_session_does_not_start_sweeps(tmp_path, monkeypatch, make_app):
    from minigpt import serving_policy

    monkeypatch.setenv(serving_policy.ENV_SERVED, "1")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        plan = str(app.screen.query_one("#lab-plan", Static).render())
        assert "minigpt sweep" in plan and "enter asks first" not in plan  # no promise Enter cannot keep
        await pilot.press("enter")  # the highlighted preset
        await until(pilot, lambda: any("browser session" in n.message for n in app._notifications), 10,
                    "the refusal notice")
        assert screen_name(app) == "ExperimentsScreen" and folder.list_experiments() == []


async def test_enter_on_a_preset_asks_first_with_sizes_and_a_measured_estimate(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        lab = app.screen
        await pilot.press("c")
        await pilot.press(*"d_model=8,16 steps=20 n_layers=1")
        await pilot.pause()
        plan = str(lab.query_one("#lab-plan", Static).render())
        assert "2 runs" in plan and "d_model=8" in plan and "d_model=16" in plan  # the typed grid, previewed
        await pilot.press("enter")
        await pilot.pause()
        ask = app.screen
        assert screen_name(app) == "StartSweepScreen" and folder.list_experiments() == []
        assert "parameters" in str(ask.query_one("#start-budget", Static).render())
        await until(pilot, lambda: ask.estimate is not None or ask.estimate_error is not None, 60, "the estimate",
                    step=0.2)
        assert ask.estimate is not None and len(ask.estimate.runs) == 2
        assert "about" in str(ask.query_one("#start-estimate", Static).render())
        assert all_problems(app) == []
        await pilot.press("enter")  # a second enter lands on Back (focused): nothing starts
        await pilot.pause()
        assert app.screen is lab and folder.list_experiments() == []
        await pilot.press("1")  # the preset list: enter asks, escape goes back, nothing started
        await pilot.press("enter")
        await pilot.pause()
        assert screen_name(app) == "StartSweepScreen"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is lab and folder.list_experiments() == []


def test_a_sweep_just_asked_to_run_reads_as_starting_not_as_not_started():
    from minigpt.experiments import results

    grid = parse_grid_text("d_model=8,16 steps=5 n_layers=1 n_heads=2")
    exp = folder.create_experiment(custom_spec("s", grid.axes, grid.budget, grid.base))
    assert results.collect(exp.dir).state == "not started"
    folder.write_control(exp.dir, "run", launched_pid=os.getpid())  # as scheduler.start does after launching
    assert results.collect(exp.dir).state == "starting"
