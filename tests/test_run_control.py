"""minigpt.control.workers without subprocesses: form validation, argv, following files, controls."""

from __future__ import annotations

import json
import os
import time

import pytest

from minigpt.control import form as run_form
from minigpt.control import workers as rc
from minigpt.runs.files import STATUS_FILE, process_start_time, write_json_atomic
from minigpt.training.options import TrainConfig


def course_form(**changes) -> dict[str, str]:
    values = run_form.form_from_config(run_form.preset_config("course"))
    values.update(changes)
    return values


def test_valid_form_gives_the_config_it_describes():
    cfg = run_form.config_from_form(course_form(d_model="32", n_heads="2", budget="500", dropout="0.1"))
    assert (cfg.d_model, cfg.n_heads, cfg.steps, cfg.dropout, cfg.time_s) == (32, 2, 500, 0.1, None)
    timed = run_form.config_from_form(course_form(budget_kind="time", budget="90"))
    assert (timed.steps, timed.time_s) == (None, 90.0)


@pytest.mark.parametrize("name", list(run_form.PRESETS))
def test_presets_round_trip_through_the_form(name):
    cfg = run_form.preset_config(name)
    assert run_form.config_from_form(run_form.form_from_config(cfg)) == cfg


@pytest.mark.parametrize("changes, field, words", [
    (dict(d_model="30", n_heads="4"), "d_model", "divisible"),
    (dict(lr="fast"), "lr", "not a number"),
    (dict(n_layers="2.5"), "n_layers", "whole number"),
    (dict(budget="0"), "budget", "positive"),
    (dict(batch_size="-3"), "batch_size", "positive"),
    (dict(dropout="1.5"), "dropout", "dropout"),
    (dict(d_model=""), "d_model", "value is needed"),
    (dict(d_model="322264400", n_heads="4"), "d_model", "parameters"),
])
def test_form_refuses_impossible_values_with_the_reason(changes, field, words):
    with pytest.raises(run_form.FormError) as err:
        run_form.config_from_form(course_form(**changes))
    assert err.value.field == field
    assert words in str(err.value)


def test_form_refuses_a_bad_dataset_before_anything_starts(tmp_path):
    with pytest.raises(run_form.FormError) as err:
        run_form.config_from_form(course_form(data=str(tmp_path / "missing.txt")))
    assert err.value.field == "data" and "no such file" in str(err.value)
    bad = tmp_path / "dots.txt"
    bad.write_text("anna\nbo.b\n", encoding="utf-8")
    with pytest.raises(run_form.FormError, match="line 2"):
        run_form.config_from_form(course_form(data=str(bad)))
    assert not list(tmp_path.glob("runs/*"))


def test_unavailable_device_is_refused(monkeypatch):
    monkeypatch.setattr(run_form, "available_devices", lambda: ["auto", "cpu"])
    with pytest.raises(run_form.FormError) as err:
        run_form.config_from_form(course_form(device="cuda"))
    assert err.value.field == "device"


def test_train_argv_is_what_the_cli_parses_back(tmp_path):
    from minigpt.cli import train as train_command

    names = tmp_path / "n.txt"
    names.write_text("ab\ncd\n", encoding="utf-8")
    cfg = TrainConfig(model="gpt", d_model=48, n_heads=3, n_layers=2, block_size=12, dropout=0.05, batch_size=16,
                      lr=1.5e-3, warmup=20, steps=None, time_s=42.5, eval_interval=7, device="cpu", seed=9,
                      data=str(names))
    params = train_command.make_context("train", run_form.train_argv(cfg)).params
    assert params["d_model"] == 48 and params["n_heads"] == 3 and params["n_layers"] == 2
    assert params["block_size"] == 12 and params["dropout"] == 0.05 and params["batch_size"] == 16
    assert params["lr"] == 1.5e-3 and params["warmup"] == 20 and params["time_s"] == 42.5
    assert params["steps"] is None and params["eval_interval"] == 7 and params["seed"] == 9
    assert params["device"] == "cpu" and str(params["data"]) == str(names)


def test_downsample_keeps_shape_ends_and_extremes():
    n = 100_000
    xs = list(range(n))
    ys = [((i * 7919) % 1000) / 1000 for i in range(n)]
    ys[54_321] = -5.0  # a spike that averaging would hide
    dx, dy = rc.downsample(xs, ys, 200)
    assert len(dx) <= 202
    assert dx[0] == 0 and dx[-1] == n - 1
    assert min(dy) == -5.0 and max(dy) == max(ys)
    assert dx == sorted(dx)
    assert rc.downsample([1, 2], [3, 4], 200) == ([1, 2], [3, 4])


def test_series_reads_only_complete_new_lines(tmp_path):
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text(json.dumps({"step": 1, "train_loss": 3.3, "lr": 0.1, "elapsed_s": 1}) + "\n")
    series = rc.RunSeries(tmp_path)
    assert series.poll() == 1
    with open(metrics, "a") as f:
        f.write(json.dumps({"step": 20, "train_loss": 2.9, "val_loss": 2.8, "lr": 0.2, "elapsed_s": 4}) + "\n")
        f.write('{"step": 30, "train_')  # being written
    assert series.poll() == 1
    assert series.poll() == 0
    assert (series.steps, series.val_steps, series.val_loss) == ([1, 20], [20], [2.8])
    with open(metrics, "a") as f:
        f.write('loss": 2.5, "lr": 0.3, "elapsed_s": 5}\n')
    assert series.poll() == 1 and series.train_loss[-1] == 2.5


def _status(run_dir, **values):
    base = {"state": "running", "pid": os.getpid(), "pid_start": process_start_time(os.getpid()), "step": 10,
            "total_steps": 100, "model": "gpt", "started_at": "2026-01-01T00:00:00+00:00"}
    base.update(values)
    write_json_atomic(run_dir / STATUS_FILE, base)


def test_run_state_tells_starting_from_died_before_status(tmp_path):
    write_json_atomic(tmp_path / rc.LAUNCH_FILE, {"pid": os.getpid(), "pid_start": process_start_time(os.getpid()),
                                                 "launched_ts": time.time()})
    assert rc.run_state(tmp_path).status == "starting"
    write_json_atomic(tmp_path / rc.LAUNCH_FILE, {"pid": 2 ** 22 + 12345, "launched_ts": time.time()})
    (tmp_path / rc.STDERR_FILE).write_text("Traceback …\nImportError: no module named torch\n")
    state = rc.run_state(tmp_path)
    assert state.status == "failed" and "ImportError" in state.reason
    assert rc.stderr_tail(tmp_path, 1) == ["ImportError: no module named torch"]


def test_stale_status_from_before_a_resume_is_not_believed(tmp_path):
    _status(tmp_path, state="stopped", pid=2 ** 22 + 1)
    time.sleep(0.01)
    write_json_atomic(tmp_path / rc.LAUNCH_FILE, {"pid": os.getpid(), "pid_start": process_start_time(os.getpid()),
                                                 "launched_ts": time.time()})
    assert rc.run_state(tmp_path).status == "starting"


def test_progress_and_eta():
    from minigpt.runs.listing import RunInfo

    info = RunInfo(path=None, name="r", status="running", step=25, total=100)
    frac, eta = rc.progress(info, {"step": 25, "elapsed_s": 10.0})
    assert frac == 0.25 and eta == pytest.approx(30.0)
    timed = RunInfo(path=None, name="r", status="running", step=5, total=60.0, total_unit="seconds")
    assert rc.progress(timed, {"elapsed_s": 15.0}) == (0.25, 45.0)
    assert rc.format_duration(75) == "1m15s" and rc.format_duration(None) == "–"


def test_controls_refuse_what_cannot_be_done(tmp_path):
    with pytest.raises(rc.RunControlError, match="not a run folder"):
        rc.delete_run(tmp_path)
    _status(tmp_path)  # running, and our own pid is alive
    with pytest.raises(rc.RunControlError, match="stop the run"):
        rc.delete_run(tmp_path)
    _status(tmp_path, state="finished")
    with pytest.raises(rc.RunControlError, match="nothing to stop"):
        rc.stop_run(tmp_path)
    _status(tmp_path, state="stopped")
    with pytest.raises(rc.RunControlError, match="nothing to resume"):
        import asyncio

        asyncio.run(rc.resume_run(tmp_path))
    rc.delete_run(tmp_path)
    assert not tmp_path.exists()


def test_comparison_table_orders_bigram_mlp_gpt():
    from minigpt.runs.listing import RunInfo

    infos = [RunInfo(path=None, name=n, status="finished", model=m, best_val=v, n_params=p)
             for n, m, v, p in [("g", "gpt", 2.0, 9000), ("b", "bigram", 2.45, 729), ("m", "mlp", 2.2, 12000),
                                ("g2", "gpt", 1.95, 30000)]]
    assert [r.name for r in rc.comparison_rows(infos)] == ["b", "m", "g2", "g"]
