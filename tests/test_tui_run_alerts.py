"""The training panel watching a run: the end told once by the exact escapes written through
Textual's driver (none when served in a browser), and the diagnosis shown with the key that opens
its lesson. The run folder is written by hand: it is the only channel between trainer and app."""

from __future__ import annotations

import json
import shlex
import sys

from minigpt import alerts, serving_policy, settings
from minigpt.store import Store
from tests.helpers.run_fixtures import a_training_run
from tests.helpers.waiting import until, wait_until
from tui.lessons.lesson import LessonScreen
from tui.training import run_alerts
from tui.training.training import TrainingScreen

RUN = "20260105-110000"  # a_training_run's folder


def overfitting_metrics(run) -> None:
    lines = [{"format": "minigpt-metrics", "format_version": 2}]
    for step in range(10, 201, 10):
        record = {"step": step, "lr": 5e-3, "tokens_per_s": 30000.0, "elapsed_s": step * 0.03,
                  "train_loss": round(2.6 - 0.004 * step, 5)}
        if step % 50 == 0:
            record["val_loss"] = {50: 2.3, 100: 2.2, 150: 2.35, 200: 2.5}[step]
        lines.append(record)
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))


def end_run(run, state: str = "finished") -> None:
    status = json.loads((run / "status.json").read_text())
    status.update(state=state, step=300, val_loss=2.1, test_loss=2.08)
    (run / "status.json").write_text(json.dumps(status))


async def watch(make_app, run, pilot_then):
    app = make_app(initial=f"run:{run}")
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrainingScreen) and app.screen.panel.state is not None
                    and app.screen.panel.state.status == "running", 15, "the running run")
        await pilot_then(app, pilot)


async def test_the_panel_shows_the_diagnosis_rings_once_at_the_end_and_d_opens_the_lesson(make_app, monkeypatch):
    monkeypatch.delenv("TMUX", raising=False)
    written: list[str] = []
    monkeypatch.setattr(run_alerts, "terminal_writer", lambda app: written.append)
    run = a_training_run()
    overfitting_metrics(run)

    async def then(app, pilot):
        panel = app.screen.panel
        await until(pilot, lambda: panel.symptoms, 15, "the diagnosis")
        assert [s.id for s in panel.symptoms] == ["overfitting"]
        line = panel.query_one("#run-diagnosis")
        assert line.display and str(line.render()).startswith("⚕ Overfitting (d: lesson): val loss 2.500 at step 200")
        assert written == []  # a run training says nothing
        end_run(run)
        await until(pilot, lambda: written, 15, "the alert")
        await pilot.pause(1.0)  # polls go on: the end is told once
        assert written == [f"\a\x1b]9;minigpt: {RUN} finished at step 300: val loss 2.1000\x07"
                           f"\x1b]777;notify;minigpt;{RUN} finished at step 300: val loss 2.1000\x07"]
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, LessonScreen), 15, "the lesson")
        assert app.screen.lesson.id == "training"

    await watch(make_app, run, then)


class FakeDriver:
    def __init__(self):
        self.written: list[str] = []

    def write(self, data: str) -> None:
        self.written.append(data)


class FakeApp:
    """What run_alerts.deliver uses of an app: its store, driver and toasts."""

    is_headless = False

    def __init__(self, store=None):
        self.store, self._driver, self.toasts = store, FakeDriver(), []

    def notify(self, message, **kwargs) -> None:
        self.toasts.append(message)


def test_served_in_a_browser_no_escape_is_sent_only_the_toast(monkeypatch):
    monkeypatch.delenv("TMUX", raising=False)
    alert = alerts.event("diverged", "r", "r diverged at step 7: training diverged")
    app = FakeApp()
    run_alerts.deliver(app, alert)
    assert app._driver.written == ["\a\x1b]9;minigpt: r diverged at step 7: training diverged\x07"
                                   "\x1b]777;notify;minigpt;r diverged at step 7: training diverged\x07"]
    monkeypatch.setenv(serving_policy.ENV_SERVED, "1")
    served = FakeApp()
    run_alerts.deliver(served, alert)
    assert served._driver.written == [] and len(served.toasts) == 1


def test_the_settings_store_turns_the_escapes_off_and_runs_the_command(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    try:
        settings.set(store, settings.ALERTS_NOTIFY, False)
        app = FakeApp(store)
        run_alerts.deliver(app, alerts.event("finished", "r", "r finished"))
        assert app._driver.written == [] and app.toasts == []  # turned off: and no command to run
        out = tmp_path / "ran"
        code = "import os, sys; open(sys.argv[1], 'w').write(os.environ['MINIGPT_EVENT'])"
        settings.set(store, settings.ALERTS_ON_EVENT, shlex.join([sys.executable, "-c", code, str(out)]))
        run_alerts.deliver(app, alerts.event("finished", "r", "r finished"))
        wait_until(lambda: out.exists() and out.read_text() == "finished", what="the command")
    finally:
        store.close()


def test_the_diagnosis_line_names_the_others_and_escapes_markup():
    from minigpt.training.diagnosis import Symptom

    first = Symptom("spikes", "Loss spikes", "1 record(s) jump up, [b]x", "why", "training")
    second = Symptom("update_ratio", "Update-to-weight ratio out of band", "b0.up", "why", "training")
    text = run_alerts.diagnosis_text([first, second])
    assert text == ("[b]⚕ Loss spikes[/b] (d: lesson) [dim](also: Update-to-weight ratio out of band)[/dim]: "
                    "1 record(s) jump up, \\[b]x")
