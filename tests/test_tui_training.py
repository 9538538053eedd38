"""The training area driven with Pilot against real `minigpt train` subprocesses on a tiny model.

Tiny config (d=16, 1 layer, 60 steps, eval every 20) so a run takes seconds; the tests wait on
the run folder, with generous deadlines because the CI machines are shared.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from minigpt import paths
from minigpt.control import workers as rc
from minigpt.runs import listing as runs
from minigpt.store import Store
from tui.app import TutorApp
from tui.screens.training import TrainingScreen
from tui.widgets.loss_chart import LossChart
from tui.widgets.training_form import TrainingForm
from tui.widgets.training_panel import RunPanel

REPO = Path(__file__).resolve().parents[1]
# A time budget keeps the run alive long enough for stop / resume / quit whatever the machine's load.
TINY = dict(d_model="16", n_heads="2", n_layers="1", batch_size="32", budget_kind="time", budget="30",
            eval_interval="20", lr="0.01", device="cpu")


def make_app(tmp_path, **kw) -> TutorApp:
    return TutorApp(store=Store(tmp_path / "p.sqlite3"), **kw)


async def wait_for(pilot, condition, timeout: float, what: str, step: float = 0.2, describe=lambda: ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        await pilot.pause(step)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} {describe()}")


def fill_form(form: TrainingForm, **values) -> None:
    current = form.values()
    current.update(values)
    form.fill(current)


async def open_training_form(app, pilot) -> TrainingScreen:
    await pilot.pause()
    await pilot.press("t")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, TrainingScreen) and screen.mode == "form"
    return screen


async def test_form_refuses_impossible_combinations_in_the_ui(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_training_form(app, pilot)
        fill_form(screen.form, d_model="30", n_heads="4")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "divisible" in screen.form.error_text and "Not started" in screen.form.error_text
        assert screen.query_one("#f-d_model").has_class("-invalid")
        fill_form(screen.form, d_model="32", lr="abc")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "learning rate" in screen.form.error_text and screen.query_one("#f-lr").has_class("-invalid")
        fill_form(screen.form, lr="0.003", data=str(tmp_path / "nope.txt"))
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "no such file" in screen.form.error_text
        assert screen.mode == "form" and runs.list_runs() == []
        # A preset fills the fields with a valid configuration again.
        screen.form.query_one("#f-preset").value = "tiny"
        await pilot.pause()
        assert screen.form.values()["d_model"] == "16"


def chart_matches_library(panel: RunPanel) -> None:
    """The chart draws (a downsampling of) exactly the library's metrics."""
    records, _ = runs.read_metrics(panel.run_dir)
    train = [(r["step"], r["train_loss"]) for r in records if "train_loss" in r]
    chart = panel.query_one("#loss-chart", LossChart)
    xs, ys = chart.drawn["train"]
    assert set(zip(xs, ys)) <= set(train) and xs[0] == train[0][0]


async def test_start_stop_resume_quit_and_reattach(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_training_form(app, pilot)
        fill_form(screen.form, **TINY)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: screen.mode == "panel", 10, "the panel")
        panel = screen.panel
        run_dir = panel.run_dir
        await wait_for(pilot, lambda: len(panel.series.val_loss) >= 1, 60, "the first val point")
        await wait_for(pilot, lambda: "val" in panel.query_one("#loss-chart", LossChart).drawn, 3, "a redraw")
        chart_matches_library(panel)
        assert "step" in str(panel.query_one("#run-stats").render())
        await pilot.press("s")
        await wait_for(pilot, lambda: panel.state.status == "stopped", 30, "a clean stop")
        stopped_at = panel.state.info.step
        assert "■ stopped" in str(panel.query_one("#run-stats").render())
        assert rc.has_checkpoint(run_dir)
        await pilot.press("r")
        await wait_for(pilot, lambda: panel.state.status == "running" and panel.state.info.step > stopped_at,
                       60, "the resumed run to progress", describe=lambda: (
                           panel.state, rc.stderr_tail(run_dir), (run_dir / "stdout.log").read_text()))
        pid = panel.state.alive_pid
    # The app is gone; the worker is not.
    assert runs.pid_alive(pid)
    step_when_closed = runs.read_run(run_dir).step
    app2 = make_app(tmp_path)
    async with app2.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("t")  # the area opens on the run in progress
        await pilot.pause()
        screen = app2.screen
        assert isinstance(screen, TrainingScreen) and screen.panel.run_dir == run_dir
        panel = screen.panel
        await wait_for(pilot, lambda: panel.state.info.step > step_when_closed, 30, "progress after reopening")
        await wait_for(pilot, lambda: panel.state.status == "finished", 60, "the run to finish")
        await wait_for(pilot, lambda: len(panel.samples) == 6, 20, "samples from the checkpoint")
        assert "✓ finished" in str(panel.query_one("#run-stats").render())
    finished = [r for r in runs.list_runs() if r.status == "finished"]
    assert [r.path for r in finished] == [run_dir] and (run_dir / "checkpoint" / "model.safetensors").exists()


async def test_watch_attaches_to_a_cli_run_and_sees_kill_9(tmp_path, monkeypatch):
    run_dir = paths.runs_dir() / "from-cli"
    with open(tmp_path / "cli-stderr.log", "wb") as err:
        worker = subprocess.Popen(
            [sys.executable, "-m", "minigpt.cli", "train", "--d-model", "16", "--n-heads", "2", "--n-layers", "1",
             "--batch-size", "32", "--steps", "400", "--eval-interval", "20", "--device", "cpu", "--out",
             str(run_dir), "-q"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        # `minigpt watch` (no argument) opens the app on the latest run.
        import tui.app
        from tui.cli import main

        opened = {}
        monkeypatch.setattr(tui.app, "run_app", lambda **kw: opened.update(kw))
        deadline = time.monotonic() + 30
        while not (run_dir / "status.json").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        result = CliRunner().invoke(main, ["watch"])
        assert result.exit_code == 0, result.output
        assert opened["initial"] == f"run:{run_dir.resolve()}"
        app = make_app(tmp_path, initial=opened["initial"])
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, TrainingScreen) and app.screen.panel.series is not None,
                           15, "the training screen")
            panel = app.screen.panel
            await wait_for(pilot, lambda: len(panel.series.steps) >= 2, 60, "points from the CLI run")
            before = len(panel.series.steps)
            await wait_for(pilot, lambda: len(panel.series.steps) > before, 30, "more points")
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait()
            killed = time.monotonic()
            await wait_for(pilot, lambda: panel.state.status == "failed", 2.0, "'failed' within 2 s", step=0.05)
            assert time.monotonic() - killed < 2.0
            error = str(panel.query_one("#run-error").render())
            assert "✗ The worker failed" in error and panel.query_one("#run-error").display
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


async def test_runs_screen_lists_copies_and_deletes_with_confirmation(tmp_path):
    from minigpt.training.options import TrainConfig
    from minigpt.runs.files import write_json_atomic

    run_dir = runs.new_run_dir(name="old-run")
    cfg = TrainConfig(d_model=24, n_heads=3, n_layers=1, steps=50)
    write_json_atomic(run_dir / "config.json", cfg.to_dict())
    write_json_atomic(run_dir / "status.json", {"state": "running", "pid": 2 ** 22 + 7, "step": 12,
                                                "total_steps": 50, "model": "gpt", "n_params": 1234})
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(__import__("tui.screens.runs", fromlist=["RunsScreen"]).RunsScreen())
        await pilot.pause()
        table = app.screen.query_one("#runs-table")
        row = [str(c) for c in table.get_row_at(0)]
        assert row[0] == "✗ failed" and row[1] == "old-run" and row[3] == "1,234" and row[5] == "12/50"
        await pilot.press("c")  # copy settings into a new run's form
        await pilot.pause()
        assert isinstance(app.screen, TrainingScreen) and app.screen.form.values()["n_heads"] == "3"
        await pilot.press("escape")
        await pilot.pause()
        app.push_screen(__import__("tui.screens.runs", fromlist=["RunsScreen"]).RunsScreen())
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("n")  # no: nothing is deleted
        await pilot.pause()
        assert run_dir.exists()
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert not run_dir.exists() and app.screen.query_one("#runs-table").row_count == 0
