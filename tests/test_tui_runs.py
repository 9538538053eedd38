"""Runs you can tell apart and background runs you can see: the runs list and the compare view
show each run's key settings, compare switches metric, smoothing and axis with the legend beside
the chart, a stop shows within a second, and quitting names the runs that keep training."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from minigpt import paths
from minigpt.control import run_processes
from minigpt.runs.files import process_start_time
from tests.helpers.run_fixtures import write_course_runs, write_run
from tests.helpers.screen_checks import footer_problems, screen_lines
from tests.helpers.screen_walk import settle
from tests.helpers.waiting import until, wait_until
from tui import navigation
from tui.common.loss_chart import LossChart
from tui.launch import background_runs_message
from tui.training.training_panel import STOPPING_POLL_S


def footer_text(app) -> str:
    return screen_lines(app)[-1]


@pytest.fixture
def app(make_app):
    write_course_runs(paths.runs_dir())
    write_run(paths.runs_dir(), "20260105-100400", lr=2.5e-3, seed=11, best_val=2.01, label="wide lr 2.5e-3",
              note="after the warmup change")
    return make_app()


async def test_runs_list_shows_the_settings_that_tell_runs_apart(app):
    async with app.run_test(size=(80, 24)) as pilot:
        navigation.open_screen(app, "runs")
        await settle(pilot)
        table = app.screen.query_one("#runs-table")
        cells = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        rows = {row[1]: row for row in cells}
        named = rows["wide lr 2.5e-3"]
        assert named[2:6] == ["GPT 64×4", "2.5e-3", "300/300", "11"]
        # A run without a name of its own gets one from its settings (round-1 runs too).
        stopped = rows["gpt d32 L2 lr3e-3"]
        assert stopped[:6] == ["■", "gpt d32 L2 lr3e-3", "GPT 32×2", "3e-3", "1200/3000", "7"]
        assert rows["bigram"][3] == "–"  # a bigram is counted: no learning rate
        # The highlighted run in full underneath, with its note.
        table.move_cursor(row=list(rows).index("wide lr 2.5e-3"))
        await settle(pilot, lambda: "after the warmup change" in str(app.screen.query_one("#runs-detail").render()))
        detail = "\n".join(screen_lines(app)[-6:])
        assert "wide lr 2.5e-3" in detail and "(20260105-100400)" in detail
        assert "lr 2.5e-3" in detail and "seed 11" in detail and "after the warmup change" in detail
        assert "205k params" in detail  # the size moved from the table to this line
        # Only keys that work: nothing runs, so no Stop; a stopped run offers Resume.
        assert "Stop" not in footer_text(app) and "Resume" not in footer_text(app)
        table.move_cursor(row=list(rows).index("gpt d32 L2 lr3e-3"))
        await pilot.pause()
        # Stopped before any checkpoint: nothing to resume, so no Resume (the panel's rule too).
        assert "Resume" not in footer_text(app) and "Stop" not in footer_text(app)
        run_dir = app.screen.selected_path()
        (run_dir / "last").mkdir()
        (run_dir / "last" / "config.json").write_text("{}", encoding="utf-8")
        app.screen.refresh_bindings()
        await pilot.pause()
        assert "Resume" in footer_text(app) and "Stop" not in footer_text(app)
        navigation.open_screen(app, "training", run_dir=run_dir)
        await settle(pilot, lambda: app.screen.panel.state is not None)
        assert app.screen.check_action("resume", ()) and not app.screen.check_action("stop", ())


async def test_names_take_the_width_at_120_columns_and_the_finished_panel_shows_the_test_loss(make_app):
    long = "a run with a long name that tells it apart"
    write_run(paths.runs_dir(), "20260105-100500", label=long, best_val=2.0)
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        navigation.open_screen(app, "runs")
        await settle(pilot)
        table = app.screen.query_one("#runs-table")
        assert str(table.get_row_at(0)[1]) == long  # whole at 120 columns (cut at 20 at 80)
        navigation.open_screen(app, "training", run_dir=paths.runs_dir() / "20260105-100500")
        await settle(pilot, lambda: app.screen.panel.state is not None)
        stats = str(app.screen.query_one("#run-stats").render())
        assert "test 1.9800" in stats


async def test_compare_metric_smoothing_log_axis_and_legend_beside_the_chart(app):
    async with app.run_test(size=(80, 24)) as pilot:
        navigation.open_screen(app, "compare_runs")
        scr = app.screen
        await settle(pilot, lambda: len(scr.curves) == len(scr.shown))
        chart = scr.query_one(LossChart)
        gpt = str(paths.runs_dir() / "20260105-100200")
        # The chart redraws on a timer: wait for a drawing made after the change, not a fixed time.
        await until(pilot, lambda: gpt in chart.drawn and not chart._dirty, 30, "the chart to draw the runs")
        assert not chart.legend and all(not s.label or s.label for s in chart.series.values())
        legend = str(scr.query_one("#compare-legend").render())
        # The best of each kind, then the next best: each by its name, then its settings.
        assert "● bigram\n  BIGRAM seed 1337" in legend
        assert "+ gpt d64 L4 lr5e-3\n  GPT 64×4 lr 5e-3 seed 1337" in legend
        assert "■ wide lr 2.5e-3\n  GPT 64×4 lr 2.5e-3 seed 11" in legend
        # Val points at steps 50, 100 …; the axis starts at 0 and every tick is a whole step.
        xticks = sorted(chart.plt.monitor.xticks[0])
        assert xticks[0] == 0 and len(xticks) >= 3 and all(float(t).is_integer() for t in xticks)
        assert chart.drawn[gpt][0][:2] == [50, 100]
        redraws = chart.redraws
        await pilot.press("m")  # train loss, logged every 10 steps
        await until(pilot, lambda: chart.redraws > redraws and not chart._dirty, 30, "a redraw of train loss")
        assert chart.drawn[gpt][0][:2] == [1, 10]
        raw = list(chart.drawn[gpt][1])
        redraws = chart.redraws
        await pilot.press("s")  # smoothing 0.6
        await until(pilot, lambda: chart.redraws > redraws and not chart._dirty, 30, "a redraw, smoothed")
        smoothed = chart.drawn[gpt][1]
        assert smoothed[0] == pytest.approx(raw[0]) and smoothed[2] != pytest.approx(raw[2])
        redraws = chart.redraws
        await pilot.press("l")
        await until(pilot, lambda: chart.redraws > redraws and not chart._dirty, 30, "a redraw on a log axis")
        assert chart.log_y and "log axis on" in str(scr.query_one("#compare-options").render())
        yticks, ylabels = chart.plt.monitor.yticks[0], chart.plt.monitor.ylabels[0]
        assert all(float(lab) == pytest.approx(10 ** t) for t, lab in zip(yticks, ylabels))
        # Hide the named run, then show it again: space on its row.
        table = scr.query_one("#compare-table")
        names = [str(table.get_row_at(i)[2]) for i in range(table.row_count)]
        table.move_cursor(row=names.index("wide lr 2.5e-3"))
        await pilot.press("space")
        await pilot.pause()
        assert "wide lr 2.5e-3" not in str(scr.query_one("#compare-legend").render())
        await pilot.press("space")
        await settle(pilot, lambda: len(scr.curves) >= len(scr.shown))
        assert "wide lr 2.5e-3" in str(scr.query_one("#compare-legend").render())
        assert "lr 2.5e-3" in str(scr.query_one("#compare-detail").render())


FAKE_WORKER = textwrap.dedent("""
    import json, os, signal, sys, time
    from minigpt.runs.files import process_start_time, write_json_atomic
    from minigpt.runs.lock import RunLock
    run = sys.argv[-1]
    lock = RunLock(run).acquire()  # a trainer holds its run's lock: what a stop checks before signalling
    def status(state):
        st = json.load(open(os.path.join(run, "status.json")))
        st.update(state=state, pid=os.getpid(), pid_start=process_start_time(os.getpid()))
        write_json_atomic(os.path.join(run, "status.json"), st)
    def stop(*_):
        # Finishing the step and saving, as the trainer does: until the test has looked at the
        # panel (it writes finish-stop), so a loaded machine cannot make the stop end unseen.
        end = time.monotonic() + 30
        while not os.path.exists(os.path.join(run, "finish-stop")) and time.monotonic() < end:
            time.sleep(0.02)
        status("stopped")
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    status("running")
    while True:
        time.sleep(0.05)
""")


async def test_a_stop_shows_within_a_second(app, tmp_path, monkeypatch):
    run = write_run(paths.runs_dir(), "20260105-100500", state="running", step=120)
    # Its command line reads as a trainer's (``minigpt.cli train --out RUN``), as a stop requires.
    worker = subprocess.Popen([sys.executable, "-c", FAKE_WORKER, "minigpt.cli", "train", "--out", str(run)],
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        def started() -> bool:
            text = (run / "status.json").read_text()
            return '"running"' in text and str(worker.pid) in text

        wait_until(started, 30, "the fake worker to start")
        async with app.run_test(size=(80, 24)) as pilot:
            navigation.open_screen(app, "training", run_dir=run)
            await settle(pilot, lambda: app.screen.panel.state is not None)
            assert "Stop" in footer_text(app)
            assert not footer_problems(app.screen)  # s Stop once pushed "? Help" off at 80 columns
            panel = app.screen.panel
            polls = []  # (when the panel began reading the run's status, what it read)
            real_run_state = run_processes.run_state

            def recorded_run_state(run_dir):
                began = time.time()
                view = real_run_state(run_dir)
                polls.append((began, str(view.status)))
                return view

            monkeypatch.setattr(run_processes, "run_state", recorded_run_state)  # what every poll reads
            await pilot.press("s")
            await pilot.pause()
            assert "stopping" in str(app.screen.query_one("#run-stats").render())  # at once
            # While a stop is pending the panel reads the status ten times a second, not every 0.4 s.
            assert panel._fast_poll is not None and STOPPING_POLL_S == 0.1
            (run / "finish-stop").touch()  # the worker ends its step and writes "stopped"
            await settle(pilot, lambda: str(panel.state.status) == "stopped", timeout=20)
            assert str(panel.state.status) == "stopped", "the panel never showed the stop"
            # The first or second poll that began after the worker wrote "stopped" showed it (the
            # second: the file's time is the kernel's coarse clock, a few ms behind time.time()).
            # Counted in polls, not seconds: a loaded machine delays every poll alike (it took
            # 3.7 s of wall time once, at a load average of 6 on two cores).
            written = (run / "status.json").stat().st_mtime
            after = [status for began, status in polls if began >= written]
            assert "stopped" in after[:2], (written, polls[-5:])
            assert "■ stopped" in str(app.screen.query_one("#run-stats").render())
            assert "Resume" in footer_text(app) or "Stop" not in footer_text(app)
    finally:
        worker.kill()
        worker.wait()


def test_quitting_names_the_runs_that_keep_training(tmp_path):
    assert background_runs_message() == ""  # nothing trains: nothing to say
    run = write_run(paths.runs_dir(), "20260105-100600", state="running", step=812)
    status = (run / "status.json").read_text()
    pid = os.getpid()  # a live process stands in for the worker
    status = status.replace('"pid": null', f'"pid": {pid}').replace('"pid_start": null',
                                                                      f'"pid_start": {process_start_time(pid)}')
    (run / "status.json").write_text(status)
    message = background_runs_message()
    assert "1 training run continues in the background" in message
    assert "gpt d64 L4 lr5e-3 (20260105-100600): step 812/300" in message
    data_dir = os.environ["MINIGPT_DATA_DIR"]
    assert f"minigpt --data-dir {data_dir} watch 20260105-100600" in message
    assert f"minigpt --data-dir {data_dir} stop 20260105-100600" in message


async def test_compare_markers_stay_with_their_runs_after_hide_and_show(app):
    async with app.run_test(size=(80, 24)) as pilot:
        navigation.open_screen(app, "compare_runs")
        await settle(pilot, lambda: bool(app.screen.curves))
        screen = app.screen
        before = {p: screen._marker(p) for p in screen.shown}
        first = screen.shown[0]
        table = screen.query_one("#compare-table")
        row = next(i for i, info in enumerate(screen.infos) if str(info.path) == first)
        table.move_cursor(row=row)
        await pilot.press("space")  # hide the first run
        await pilot.pause()
        assert first not in screen.shown
        assert {p: screen._marker(p) for p in screen.shown} == {p: m for p, m in before.items() if p != first}
        await pilot.press("space")  # show it again: its own marker back, the others unchanged
        await pilot.pause()
        assert {p: screen._marker(p) for p in screen.shown} == before


async def test_stop_leaves_the_panels_footer_when_the_run_finishes(make_app):
    import json

    from tests.helpers.run_fixtures import a_training_run

    run = a_training_run()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        navigation.open_screen(app, "training", run_dir=run)
        await settle(pilot, lambda: app.screen.panel.state is not None)
        assert "Stop" in footer_text(app)
        status = json.loads((run / "status.json").read_text(encoding="utf-8"))
        status.update(state="finished", pid=None, test_loss=1.98, val_loss=2.0)
        (run / "status.json").write_text(json.dumps(status), encoding="utf-8")
        await settle(pilot, lambda: "Stop" not in footer_text(app), timeout=5)
        assert "Stop" not in footer_text(app) and "test 1.9800" in str(app.screen.query_one("#run-stats").render())


async def test_a_finished_runs_line_keeps_its_end_at_80_columns(app):
    """Found walking the app: with its test loss, ETA – and the cpu threads, a finished run's line
    ran past 80 columns and lost tok/s. ETA and threads are shown only while running."""
    run = write_run(paths.runs_dir(), "20260105-100600", state="finished", steps=3000, best_val=2.2066)
    async with app.run_test(size=(80, 24)) as pilot:
        navigation.open_screen(app, "training", run_dir=run)
        await settle(pilot, lambda: app.screen.panel.state is not None)
        stats = app.screen.query_one("#run-stats")
        text = str(stats.render())
        assert "test 2.18" in text and "tok/s" in text and "ETA" not in text
        assert stats.region.height == 1 and len(text.rstrip()) <= stats.region.width


async def test_a_loss_chart_with_one_point_or_a_flat_curve_draws():
    """A run's first log line is one point: its y range is empty, and plotext divided by it (the
    app closed in the browser test while a run started). The axis gets some height instead."""
    from textual.app import App, ComposeResult

    class OneChart(App):
        def compose(self) -> ComposeResult:
            yield LossChart("loss", id="chart")

    app = OneChart()
    async with app.run_test(size=(80, 24)) as pilot:
        chart = app.query_one(LossChart)
        chart.set_reference("uniform", 3.2958, "uniform 3.30")  # as the training panel draws them
        chart.set_reference("bigram", 2.4541, "bigram 2.45")
        chart.set_series("train", [1], [3.3368], label="train")
        await pilot.pause()
        assert chart.render() is not None
        chart.set_series("train", [1, 10, 20], [2.5, 2.5, 2.5], label="train")
        await pilot.pause()
        assert chart.render() is not None
