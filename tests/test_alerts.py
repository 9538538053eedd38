"""Alerts (minigpt.alerts): the events a run folder says, the exact bytes written to the terminal,
the learner's command run for real with the event in its environment, and the command never stored
in the run folder."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from minigpt import alerts, paths, settings
from minigpt.cli.main import main
from minigpt.runs.schema import RunState, RunStatus
from minigpt.store import Store
from tests.helpers.alert_recorder import recorded, recorder_command
from tests.helpers.waiting import wait_until


# The learner's command in these tests: appends its MINIGPT_* environment to a file, one JSON line each.
def status(state: RunState, **values) -> RunStatus:
    return RunStatus(state=state, **values)


def test_the_bell_and_both_notification_escapes_exactly():
    alert = alerts.event("finished", "run-1", "run-1 finished at step 40: val loss 2.1000", step=40)
    assert alerts.escape_bytes(alert, tmux=False) == (
        b"\a\x1b]9;minigpt: run-1 finished at step 40: val loss 2.1000\x07"
        b"\x1b]777;notify;minigpt;run-1 finished at step 40: val loss 2.1000\x07")


def test_inside_tmux_each_escape_is_wrapped_for_passthrough_and_the_bell_stays_tmuxs():
    alert = alerts.event("diverged", "r", "r diverged")
    assert alerts.escape_bytes(alert, tmux=True) == (
        b"\a\x1bPtmux;\x1b\x1b]9;minigpt: r diverged\x07\x1b\\"
        b"\x1bPtmux;\x1b\x1b]777;notify;minigpt;r diverged\x07\x1b\\")


def test_tmux_is_read_from_the_environment(monkeypatch):
    alert = alerts.event("finished", "r", "done")
    monkeypatch.setenv("TMUX", "/tmp/tmux-1000/default,1,0")
    assert alerts.escape_bytes(alert).count(b"\x1bPtmux;") == 2
    monkeypatch.delenv("TMUX")
    assert b"tmux" not in alerts.escape_bytes(alert)


def test_a_run_name_cannot_end_the_escape_or_add_a_field():
    hostile = "evil\x07\x1b]52;c;cGF5bG9hZA==\x07;title\u202e\x9b" + "x" * 500
    alert = alerts.event("finished", hostile, f"{hostile} finished")
    raw = alerts.escape_bytes(alert, bell=False, tmux=False)
    osc9, osc777 = raw.split(b"\x07")[:2]
    for part in (osc9, osc777):
        assert part.count(b"\x1b") == 1  # only the escape's own ESC
        assert all(ch >= 0x20 for ch in part[1:])
    assert raw.count(b"\x07") == 2
    assert osc777.count(b";") == 3  # 777;notify;title;body: nothing from the run adds a field
    assert len(alerts.clean(hostile)) == alerts.MAX_TEXT


def test_the_watcher_says_each_end_once_and_nothing_for_a_run_already_over(tmp_path):
    watcher = alerts.AlertWatcher(tmp_path / "run-a")
    assert watcher.status(status(RunState.RUNNING, step=5)) == []
    ended = watcher.status(status(RunState.FINISHED, step=40, val_loss=2.1, test_loss=2.12, best_val=2.1))
    assert [(e.kind, e.run, e.figures["val_loss"]) for e in ended] == [("finished", "run-a", 2.1)]
    assert watcher.status(status(RunState.FINISHED, step=40)) == []
    old = alerts.AlertWatcher(tmp_path / "run-b")
    assert old.status(status(RunState.FINISHED, step=40)) == []


def test_a_divergence_a_crash_and_a_stop_are_told_apart(tmp_path):
    said = {}
    for reason, state in (("training diverged: the loss became nan at step 7", RunState.FAILED),
                          ("the worker died", RunState.FAILED), (None, RunState.STOPPED)):
        watcher = alerts.AlertWatcher(tmp_path / "r")
        watcher.status(status(RunState.STARTING))
        [alert] = watcher.status(status(state, step=7, failure_reason=reason))
        said[reason] = alert.kind
    assert list(said.values()) == ["diverged", "failed", "stopped"]


def test_the_target_loss_alerts_once_at_the_first_val_loss_at_or_below_it(tmp_path):
    watcher = alerts.AlertWatcher(tmp_path / "r", target_loss=2.0)
    assert watcher.records([{"step": 10, "train_loss": 1.5}, {"step": 20, "val_loss": 2.05}]) == []
    [alert] = watcher.records([{"step": 30, "val_loss": 2.0}, {"step": 40, "val_loss": 1.9}])
    assert (alert.kind, alert.figures) == ("target_reached", {"step": 30, "val_loss": 2.0, "target_loss": 2.0})
    assert watcher.records([{"step": 50, "val_loss": 1.8}]) == []


def test_the_command_runs_for_real_with_the_event_in_its_environment(tmp_path):
    command, out = recorder_command(tmp_path)
    alert = alerts.event("finished", "run; rm -rf ~", "done $(touch pwned)", step=40, val_loss=2.123456789)
    alerts.run_command(command, alert).wait(timeout=30)
    [env] = recorded(out)
    env = {k: v for k, v in env.items() if k not in os.environ}  # (the session's own, inherited)
    assert env == {"MINIGPT_EVENT": "finished", "MINIGPT_RUN": "run; rm -rf ~", "MINIGPT_MESSAGE": "done $(touch pwned)",
                   "MINIGPT_STEP": "40", "MINIGPT_VAL_LOSS": "2.12346"}
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()


def test_a_run_diverging_while_it_trains_is_told_once_and_not_again_at_its_end(tmp_path):
    """A loss that explodes but stays a number does not fail the run (an lr of 10 walked in tmux
    finished with val loss 10.7 and only "finished" was told): the diagnosis' evidence is."""
    said, logged = [], []
    evidence = "train loss 91.9 at step 70, against ln V = 3.296"
    run = alerts.ForegroundRun(tmp_path / "hot", None, said.append, diverging=lambda _dir: evidence)
    on_log = run.wrap(logged.append)
    on_log({"step": 10, "train_loss": 40.0})  # checked at evaluations only
    assert said == [] and len(logged) == 1
    on_log({"step": 20, "train_loss": 90.0, "val_loss": 107.2})
    on_log({"step": 40, "train_loss": 44.7, "val_loss": 34.6})
    [alert] = said
    assert (alert.kind, alert.message) == ("diverged", f"hot is diverging at step 20: {evidence}")
    assert run.watcher.state(RunState.FAILED, step=60, reason="training diverged: the loss became nan") == []
    calm = alerts.ForegroundRun(tmp_path / "calm", None, said.append, diverging=lambda _dir: None)
    calm.wrap(logged.append)({"step": 20, "val_loss": 2.3})
    assert len(said) == 1  # no evidence, nothing said
    watcher = alerts.AlertWatcher(tmp_path / "cooled")  # diverging, then finishing: its end is still news
    watcher.state(RunState.RUNNING)
    assert [a.kind for a in watcher.diverging(20, evidence)] == ["diverged"] and watcher.diverging(40, evidence) == []
    [end] = watcher.state(RunState.FINISHED, step=100, val_loss=10.67)
    assert end.kind == "finished"


def test_the_alert_command_is_reaped_when_it_ends_without_anyone_waiting():
    """No zombie until some later subprocess call: a thread waits for the command."""
    proc = alerts.run_command("true", alerts.event("finished", "r", "r finished"))
    deadline = time.monotonic() + 20
    while proc.returncode is None and time.monotonic() < deadline:  # set only by a wait
        time.sleep(0.01)
    assert proc.returncode == 0
    with pytest.raises(ChildProcessError):
        os.waitpid(proc.pid, os.WNOHANG)  # already reaped


def test_delivery_follows_the_choices_and_a_missing_command_is_a_note():
    alert = alerts.event("stopped", "r", "r stopped")
    terminal = io.BytesIO()
    assert alerts.deliver(alert, alerts.AlertChoices(), terminal) is None
    assert terminal.getvalue() == b""  # stopped is not among the default events
    assert alerts.deliver(alerts.event("finished", "r", "x"), alerts.AlertChoices(notify=False), terminal) is None
    assert terminal.getvalue() == b""
    problem = alerts.deliver(alerts.event("finished", "r", "x"),
                             alerts.AlertChoices(command="/nonexistent/notifier --now"), terminal)
    assert terminal.getvalue().startswith(b"\a") and "did not start" in problem


def test_the_settings_store_and_the_flags_choose(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    try:
        assert alerts.choices_from(store) == alerts.AlertChoices(True, None, alerts.DEFAULT_EVENTS)
        settings.set(store, settings.ALERTS_NOTIFY, False)
        settings.set(store, settings.ALERTS_ON_EVENT, "notify-send minigpt")
        assert alerts.choices_from(store) == alerts.AlertChoices(False, "notify-send minigpt", alerts.DEFAULT_EVENTS)
        assert alerts.choices_from(store, notify=True, command="") == alerts.AlertChoices(True, None, alerts.DEFAULT_EVENTS)
    finally:
        store.close()


@pytest.fixture
def small_run_args(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGPT_DATA_DIR", str(tmp_path / "user"))
    names = tmp_path / "n.txt"
    names.write_text("\n".join(Path(paths.default_dataset()).read_text().split()[:200]))
    return ["train", "--data", str(names), "--d-model", "8", "--n-heads", "2", "--n-layers", "1", "--steps", "4",
            "--eval-interval", "2", "--batch-size", "8", "--ema", "0", "--quiet"]


def test_minigpt_train_rings_runs_the_command_and_never_stores_it(tmp_path, small_run_args, monkeypatch):
    """The foreground CLI run: the target loss and the end, to its terminal and to the command; the
    command, the target and the notify choice appear in no file of the run folder."""
    terminal = io.BytesIO()
    monkeypatch.setattr(alerts, "terminal_of", lambda stream: terminal)
    command, out = recorder_command(tmp_path)
    run = tmp_path / "run"
    r = CliRunner().invoke(main, [*small_run_args, "--out", str(run), "--on-event", command, "--target-loss", "100",
                                  "--notify"])
    assert r.exit_code == 0, r.output
    wait_until(lambda: len(recorded(out)) == 2, what="both alert commands")
    assert sorted(e["MINIGPT_EVENT"] for e in recorded(out)) == ["finished", "target_reached"]
    assert all(e["MINIGPT_RUN"] == "run" for e in recorded(out))
    said = terminal.getvalue()
    assert said.count(b"\a\x1b]9;minigpt: run ") == 2 and said.count(b"\x1b]777;notify;minigpt;run ") == 2
    for path in run.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"record.py" not in data and b"on_event" not in data and b"target_loss" not in data, path


def test_no_notify_writes_nothing_to_the_terminal(tmp_path, small_run_args, monkeypatch):
    terminal = io.BytesIO()
    monkeypatch.setattr(alerts, "terminal_of", lambda stream: terminal)
    r = CliRunner().invoke(main, [*small_run_args, "--out", str(tmp_path / "run"), "--no-notify"])
    assert r.exit_code == 0, r.output
    assert terminal.getvalue() == b""


def test_reviews_due_is_told_when_the_count_goes_from_none_to_some():
    watch = alerts.ReviewsWatch()
    assert watch.seen(3) is None  # already due when the app opened: the home screen says so
    watch = alerts.ReviewsWatch()
    assert watch.seen(0) is None
    alert = watch.seen(2)
    assert (alert.kind, alert.message, alert.figures) == ("reviews_due", "2 flashcard reviews due", {"due": 2})
    assert watch.seen(5) is None and watch.seen(0) is None
    assert watch.seen(1).message == "1 flashcard review due"


def test_a_sweep_followed_to_its_end_rings(monkeypatch):
    from types import SimpleNamespace

    from minigpt.experiments import console

    monkeypatch.delenv("TMUX", raising=False)
    terminal = io.BytesIO()
    monkeypatch.setattr(alerts, "terminal_of", lambda stream: terminal)
    res = SimpleNamespace(finished=[SimpleNamespace(val_loss=2.3), SimpleNamespace(val_loss=2.1)])
    console._alert_finished("lr", res)
    assert terminal.getvalue() == (b"\a\x1b]9;minigpt: sweep lr finished: 2 runs, best val 2.1000\x07"
                                   b"\x1b]777;notify;minigpt;sweep lr finished: 2 runs, best val 2.1000\x07")


def test_an_unreadable_command_is_refused_before_training(small_run_args, tmp_path):
    r = CliRunner().invoke(main, [*small_run_args, "--out", str(tmp_path / "run"), "--on-event", "notify 'unclosed"])
    assert r.exit_code != 0 and "--on-event: cannot read the command" in r.output
    assert not (tmp_path / "run").exists()


def test_with_the_app_that_alerts_for_it_closed_a_trainer_takes_the_stored_command(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIGPT_DATA_DIR", str(tmp_path / "user"))
    store = Store(paths.database_path())
    settings.set(store, settings.ALERTS_ON_EVENT, "notify-send minigpt")
    store.close()
    quiet = alerts.choices_from(None, notify=False, command="")  # what WATCHED_TRAINER_FLAGS give
    monkeypatch.delenv(alerts.WATCHER_ENV, raising=False)
    assert alerts.unwatched(quiet) is quiet  # a trainer no app started: its own flags
    monkeypatch.setenv(alerts.WATCHER_ENV, alerts.watcher_mark()[alerts.WATCHER_ENV])
    assert alerts.unwatched(quiet) is quiet  # the app is open: it alerts
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    monkeypatch.setenv(alerts.WATCHER_ENV, f"{gone.stdout.strip()}:1")
    assert alerts.unwatched(quiet) == alerts.AlertChoices(False, "notify-send minigpt", alerts.DEFAULT_EVENTS)
    assert alerts.watcher_gone("x:y")


@pytest.mark.soak  # a real training run per case: the default tier checks the choice above
@pytest.mark.parametrize("app_open", [True, False])
def test_a_trainer_the_app_started_runs_the_command_itself_once_the_app_is_closed(tmp_path, small_run_args,
                                                                                  monkeypatch, app_open):
    """The app alerts for the trainers it starts (they get --no-notify --on-event ""); with the app
    gone (its pid now another process's, or none), the trainer runs the learner's stored command."""
    command, out = recorder_command(tmp_path)
    user = Path(os.environ["MINIGPT_DATA_DIR"])
    user.mkdir(parents=True, exist_ok=True)
    store = Store(user / "progress.sqlite3")
    settings.set(store, settings.ALERTS_ON_EVENT, command)
    store.close()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    mark = alerts.watcher_mark()[alerts.WATCHER_ENV] if app_open else f"{gone.stdout.strip()}:1"
    monkeypatch.setenv(alerts.WATCHER_ENV, mark)
    r = CliRunner().invoke(main, [*small_run_args, "--out", str(tmp_path / "run"), *alerts.WATCHED_TRAINER_FLAGS])
    assert r.exit_code == 0, r.output
    if app_open:  # the app delivers: the trainer stays quiet
        time.sleep(0.5)
        assert recorded(out) == []
    else:
        wait_until(lambda: len(recorded(out)) == 1, what="the stored command, run by the trainer")
        assert recorded(out)[0]["MINIGPT_EVENT"] == "finished"
    assert not alerts.watcher_gone(alerts.watcher_mark()[alerts.WATCHER_ENV]) and alerts.watcher_gone("x:y")
