"""Hostile run folders: damaged status files, two trainers on one run, relative data paths,
metrics after a resume, stopping from the command line.

Each case asserts the outcome a learner sees: the other runs still listed, one ``Error:`` line
(exit 2), no traceback, nothing lost.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigpt import paths
from minigpt.cli import main
from minigpt.errors import RunBusyError
from minigpt.runs import listing
from minigpt.runs.lock import RunLock
from minigpt.runs.metrics import read_metrics
from minigpt.training.loop import train
from minigpt.training.options import TrainConfig
from tests.helpers.hostile import one_error_line
from tests.helpers.waiting import until, wait_until

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "round1" / "runs"
TINY = ["--d-model", "16", "--n-heads", "2", "--n-layers", "1", "--batch-size", "32"]

# A status.json as a careless hand edit, a full disk or a hostile file leaves it.
MALFORMED = {
    "number for a date": json.dumps({"state": "stopped", "step": 3, "started_at": 1700000000}),
    "string best_val": json.dumps({"state": "finished", "step": 3, "best_val": "low"}),
    "list model": json.dumps({"state": "stopped", "step": 3, "model": ["gpt"]}),
    "null state": json.dumps({"state": None, "step": 3}),
    "unknown state": json.dumps({"state": "exploded", "step": 3}),
    "negative step": json.dumps({"state": "stopped", "step": -4}),
    "string pid on a running run": json.dumps({"state": "running", "pid": "1234", "step": 1}),
    "a list": "[1, 2, 3]",
    "half written": '{"state": "running", "st',
    "empty": "",
    "binary": b"\xff\xfe\x00\x01garbage",
    "deeply nested": "[" * 100_000 + "]" * 100_000,
    "from a newer release": json.dumps({"format": "minigpt-run-status", "format_version": 99, "state": "running"}),
}


def runs_root_with(broken_status, name: str = "broken") -> tuple[Path, Path]:
    """The runs folder holding the two round-1 runs and one run with a damaged status."""
    root = paths.runs_dir()
    shutil.copytree(FIXTURES, root, dirs_exist_ok=True)
    bad = root / name
    shutil.copytree(root / "run-gpt", bad)
    status = bad / "status.json"
    if broken_status is None:
        status.unlink()
        status.mkdir()  # a folder where the file should be
    elif isinstance(broken_status, bytes):
        status.write_bytes(broken_status)
    else:
        status.write_text(broken_status, encoding="utf-8")
    return root, bad


@pytest.mark.parametrize("content", [*MALFORMED.values(), None], ids=[*MALFORMED, "a folder"])
def test_one_damaged_status_is_listed_as_broken_and_the_others_shown(content):
    root, _bad = runs_root_with(content)
    listed = {r.name: r for r in listing.list_runs(root)}
    assert set(listed) == {"run-gpt", "run-gpt-stopped", "broken"}
    assert listed["broken"].status == "broken" and listed["broken"].reason
    assert listed["run-gpt"].status == "finished" and listed["run-gpt"].best_val == pytest.approx(2.89418, abs=1e-4)
    result = CliRunner().invoke(main, ["runs"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    table = {line.split()[0]: line for line in result.output.splitlines()[1:]}
    assert "broken" in table["broken"] and "finished" in table["run-gpt"] and "stopped" in table["run-gpt-stopped"]
    as_json = CliRunner().invoke(main, ["runs", "--json"])
    assert {r["name"]: r["status"] for r in json.loads(as_json.output)}["broken"] == "broken"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["state", "step", "started_at", "best_val", "model", "pid", "name",
                                        "total_steps", "time_budget_s", "world_size", "format_version", "error"]),
                       st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                                    lambda inner: st.lists(inner, max_size=3), max_leaves=6)))
def test_any_status_contents_read_without_raising(tmp_path_factory, values):
    run = tmp_path_factory.mktemp("runs") / "run"
    run.mkdir()
    (run / "status.json").write_text(json.dumps(values), encoding="utf-8")
    info = listing.read_run(run)
    assert info.status in ("starting", "running", "stopped", "finished", "failed", "broken")
    info.to_dict(), info.age  # what the lists show is computable
    assert [r.name for r in listing.list_runs(run.parent)] == ["run"]


def test_watch_opens_a_broken_run_and_resume_replaces_its_status(monkeypatch):
    import tui.launch
    from tui.cli import main as console

    _root, bad = runs_root_with("[1, 2]")
    opened = {}
    monkeypatch.setattr(tui.launch, "run_app", lambda **kw: opened.update(kw))
    result = CliRunner().invoke(console, ["watch", "broken"])
    assert result.exit_code == 0, result.output
    assert opened["initial"] == f"run:{bad.resolve()}"
    # The config and checkpoints are fine: resuming the finished budget rewrites a good status.
    result = CliRunner().invoke(main, ["train", "--resume", "broken", "--quiet"])
    assert result.exit_code == 0, result.output
    assert listing.read_run(bad).status == "finished"


def test_watch_of_a_missing_run_is_one_error_line():
    from tui.cli import main as console

    one_error_line(CliRunner().invoke(console, ["watch", "no-such-run"]))


async def test_screens_show_a_broken_run_beside_the_others(tmp_path, make_app):
    from tui.playground.playground import PlaygroundScreen
    from tui.training.runs import RunsScreen
    from tui.training.training import TrainingScreen

    root, bad = runs_root_with(MALFORMED["string best_val"])
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(RunsScreen())
        await pilot.pause()
        table = app.screen.query_one("#runs-table")
        glyphs = {Path(key.value).name: str(table.get_row(key)[0]) for key in table.rows}
        assert glyphs == {"broken": "!", "run-gpt": "✓", "run-gpt-stopped": "■"}
        assert "! broken" in str(app.screen.query_one("#runs-summary").render())
        table.move_cursor(row=table.get_row_index(str(bad)))
        await pilot.pause()
        detail = str(app.screen.query_one("#runs-detail").render())
        assert "broken: status.json: best_val should be a finite number" in detail
        app.push_screen(TrainingScreen(run_dir=bad))
        await until(pilot, lambda: getattr(app.screen, "panel", None) is not None
                    and app.screen.panel.state.status == "broken", 15, "the panel to read the broken run")
        panel = app.screen.panel
        assert "damaged" in str(panel.query_one("#run-error").render())
        app.push_screen(PlaygroundScreen(runs_root=root))
        for _ in range(3):
            await pilot.pause()
            await app.workers.wait_for_complete()
        assert isinstance(app.screen, PlaygroundScreen) and app.screen.batch is not None


def test_a_relative_data_path_is_stored_absolute(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "names.txt").write_text("\n".join((REPO / "data" / "names.txt").read_text().split()[:300]) + "\n")
    monkeypatch.chdir(work)
    result = CliRunner().invoke(main, ["train", "--data", "names.txt", *TINY, "--steps", "4", "--eval-interval", "4",
                                       "--out", str(tmp_path / "run"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "run" / "config.json").read_text())["data"] == str(work / "names.txt")
    monkeypatch.chdir(tmp_path)  # another folder: eval finds the data of the run
    result = CliRunner().invoke(main, ["eval", "--checkpoint", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["data"] == str(work / "names.txt")


def test_metrics_after_a_resume_never_go_back(tmp_path):
    names = tmp_path / "names.txt"
    names.write_text("\n".join((REPO / "data" / "names.txt").read_text().split()[:300]) + "\n")
    cfg = TrainConfig(d_model=16, n_heads=2, n_layers=1, batch_size=32, steps=50, eval_interval=20,
                      log_interval=5, data=str(names))
    run = tmp_path / "run"

    def killed_at_step_33(record):
        if record["step"] >= 33:
            raise KeyboardInterrupt  # the metrics of steps 25-35 outlive the checkpoint of step 20

    with pytest.raises(KeyboardInterrupt):
        train(cfg, run, on_log=killed_at_step_33)
    assert max(r["step"] for r in read_metrics(run)[0]) > 20
    train(None, run, resume=True)
    steps = [r["step"] for r in read_metrics(run)[0]]
    assert steps == sorted(set(steps)) and steps[-1] == 50, steps


def test_the_panel_series_restarts_when_a_resume_cuts_the_metrics(tmp_path):
    from minigpt.runs.files import truncate_metrics
    from minigpt.runs.metrics import RunMetrics

    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "train_loss": 2.0}) + "\n"
                                                    for s in (1, 10, 20, 30)))
    series = RunMetrics(tmp_path)
    series.poll()
    truncate_metrics(tmp_path, 20)
    with open(tmp_path / "metrics.jsonl", "a") as f:
        f.write(json.dumps({"step": 21, "train_loss": 1.9}) + "\n")
    series.poll()
    assert series.steps == [1, 10, 20, 21]


HOLD_TRAINER_LOCK = """
import sys, time
from minigpt.runs.lock import RunLock
RunLock(sys.argv[1]).acquire()
print("locked", flush=True)
time.sleep(120)
"""


def test_a_second_trainer_on_a_running_run_is_refused_until_the_first_dies():
    root = paths.runs_dir()
    shutil.copytree(FIXTURES, root, dirs_exist_ok=True)
    run = root / "run-gpt-stopped"
    before = (run / "status.json").read_bytes(), (run / "metrics.jsonl").read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", HOLD_TRAINER_LOCK, str(run)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout.readline().strip() == "locked"
        line = one_error_line(CliRunner().invoke(main, ["train", "--resume", str(run), "--quiet"]))
        assert "another process is training this run" in line and str(holder.pid) in line
        assert ((run / "status.json").read_bytes(), (run / "metrics.jsonl").read_bytes()) == before  # untouched
        with pytest.raises(RunBusyError):
            train(None, run, resume=True)
    finally:
        holder.send_signal(signal.SIGKILL)  # kill -9: no chance to clean up, the lock still goes
        holder.wait()
    with RunLock(run):
        pass


def test_stop_from_the_command_line_then_resume(tmp_path, fake_trainer):
    # The trainer is the torch-free fake, started as `minigpt train` would be: what is checked is
    # `minigpt stop`'s proof and the refusal of a second trainer (the lock), not the training.
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = paths.runs_dir() / "long"
    fake_trainer.step_s(0.02)
    trainer = subprocess.Popen([*fake_trainer.argv, "train", *TINY, "--steps", "100000",
                                "--eval-interval", "50", "--out", str(run), "--quiet"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def logging() -> bool:
            assert trainer.poll() is None, trainer.communicate()
            return bool(read_metrics(run)[0])

        wait_until(logging, 90, "the trainer's first metrics", step=0.1)
        second = CliRunner().invoke(main, ["train", "--resume", "long", "--quiet"])
        assert "another process is training this run" in one_error_line(second)
        result = CliRunner().invoke(main, ["stop", "--timeout", "60"])  # the newest running run
        assert result.exit_code == 0, result.output
        assert "stop requested: long" in result.output and "long: stopped at step" in result.output
        assert trainer.wait(timeout=30) == 0
    finally:
        if trainer.poll() is None:
            trainer.kill()
            trainer.wait()
    assert listing.read_run(run).status == "stopped"
    assert "not running" in one_error_line(CliRunner().invoke(main, ["stop", "long"]))
    assert "no running run" in one_error_line(CliRunner().invoke(main, ["stop"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.binary(max_size=40) | st.builds(json.dumps, st.dictionaries(
    st.sampled_from(["step", "train_loss", "val_loss", "lr", "x"]),
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5), max_size=4)), max_size=8))
def test_any_metrics_lines_read_as_records_with_a_step(tmp_path_factory, lines):
    run = tmp_path_factory.mktemp("run")
    (run / "metrics.jsonl").write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    records, offset = read_metrics(run)
    assert offset <= (run / "metrics.jsonl").stat().st_size
    for record in records:
        assert isinstance(record["step"], int) and record["step"] >= 0
        assert all(math.isfinite(record[k]) for k in ("train_loss", "val_loss", "lr") if k in record)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["model", "d_model", "steps", "lr", "data", "format_version", "pack", "zzz"]),
                       st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats() | st.text(max_size=5)
                       | st.lists(st.integers(), max_size=2), max_size=5))
def test_any_config_loads_or_is_one_config_error(tmp_path_factory, values):
    from minigpt.errors import ConfigError
    from minigpt.training.options import load_run_config

    run = tmp_path_factory.mktemp("run")
    (run / "config.json").write_text(json.dumps(values))
    try:
        load_run_config(run)
    except ConfigError as e:
        assert str(e)


def test_rename_a_run_and_see_it_in_the_list():
    root = paths.runs_dir()
    shutil.copytree(FIXTURES, root, dirs_exist_ok=True)
    result = CliRunner().invoke(main, ["rename", "run-gpt", "first tiny run", "--note", "lr 5e-3, 20 steps"])
    assert result.exit_code == 0, result.output
    listed = {line.split()[0]: line for line in CliRunner().invoke(main, ["runs"]).output.splitlines()[1:]}
    assert "first tiny run" in listed["run-gpt"] and "lr 5e-3, 20 steps" in listed["run-gpt"]
    assert "gpt d16 L1 rope tied lr5e-3" in listed["run-gpt-stopped"]  # round 1 had no names: made from its config
    (root / "run-gpt-stopped" / "status.json").write_text("[]")
    assert "status.json" in one_error_line(CliRunner().invoke(main, ["rename", "run-gpt-stopped", "x"]))
    assert "give a new NAME" in one_error_line(CliRunner().invoke(main, ["rename", "run-gpt"]))
