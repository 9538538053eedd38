"""minigpt.control: the form (fields from the option list, validation, presets), the estimate, starting a
run from its config file, following files, controls."""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings

from minigpt.control import form, run_processes
from minigpt.errors import ConfigError
from minigpt.runs.files import STATUS_FILE, process_start_time, write_json_atomic
from minigpt.training.options import OPTIONS, TrainConfig
from tests.helpers.config_strategies import valid_configs
from tests.helpers.waiting import wait_until


def course_form(**changes) -> dict[str, str]:
    values = form.form_from_config(form.preset_config("course"))
    values.update(changes)
    return values


def test_valid_form_gives_the_config_it_describes():
    cfg = form.config_from_form(course_form(d_model="32", n_heads="2", steps="500", dropout="0.1"))
    assert (cfg.d_model, cfg.n_heads, cfg.steps, cfg.dropout, cfg.time_s) == (32, 2, 500, 0.1, None)
    timed = form.config_from_form(course_form(steps="", time_s="90"))
    assert (timed.steps, timed.time_s) == (None, 90.0)
    advanced = form.config_from_form(course_form(pos_encoding="rope", tie_weights="on", ema="0", pack="off",
                                                     grad_clip="", block_size="12"))
    assert (advanced.pos_encoding, advanced.tie_weights, advanced.ema, advanced.pack) == ("rope", True, 0.0, False)
    assert (advanced.grad_clip, advanced.block_size) == (None, 12)


def test_the_form_has_one_field_per_option_common_first():
    assert sorted(form.FORM_OPTIONS, key=lambda o: o.name) == sorted(OPTIONS, key=lambda o: o.name)
    assert [o.advanced for o in form.FORM_OPTIONS] == sorted(o.advanced for o in OPTIONS)
    assert set(form.form_from_config(TrainConfig())) == {o.name for o in OPTIONS}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=valid_configs())
def test_config_to_form_to_config_is_the_identity(cfg):
    texts = form.form_from_config(cfg)
    assert all(isinstance(t, str) for t in texts.values())
    back = form.config_from_form(texts)
    assert back == cfg
    assert back.to_dict() == cfg.to_dict()  # and so is the saved config.json, key by key


def test_a_dataset_path_survives_the_form(tmp_path):
    names = tmp_path / "names.txt"
    names.write_text("anna\nbob\ncara\n", encoding="utf-8")  # three: fewer leave a split empty
    cfg = TrainConfig(data=str(names))
    assert form.config_from_form(form.form_from_config(cfg)) == cfg
    assert form.config_from_form(course_form(data="embedded")).data is None


@pytest.mark.parametrize("name", list(form.PRESETS))
def test_presets_round_trip_through_the_form(name):
    cfg = form.preset_config(name)
    assert form.config_from_form(form.form_from_config(cfg)) == cfg


def test_a_preset_keeps_the_device_and_the_dataset(tmp_path):
    values = course_form(device="cpu", data=str(tmp_path / "mine.txt"), d_model="48", n_heads="3", ema="0.5")
    applied = form.apply_preset(values, "tiny")
    assert (applied["device"], applied["data"]) == ("cpu", str(tmp_path / "mine.txt"))
    assert (applied["d_model"], applied["n_heads"], applied["steps"], applied["ema"]) == ("16", "2", "300", "0.999")


@pytest.mark.parametrize("changes, field, words", [
    (dict(d_model="30", n_heads="4"), "d_model", "divisible"),
    (dict(lr="fast"), "lr", "not a number"),
    (dict(n_layers="2.5"), "n_layers", "whole number"),
    (dict(steps="0"), "steps", "budget in steps must be in [1, 10000000]"),
    (dict(steps="", time_s="-5"), "time_s", "budget in seconds must be in (0, 604800]"),
    (dict(steps=""), "steps", "exactly one budget"),
    (dict(batch_size="-3"), "batch_size", "batch size"),
    (dict(dropout="1.5"), "dropout", "dropout"),
    (dict(d_model=""), "d_model", "value is needed"),
    (dict(d_model="322264400", n_heads="4"), "d_model", "d_model must be in [1, 4096]"),
    (dict(d_model="4096", n_heads="4"), "d_model", "parameters"),
    (dict(model="mlp", mlp_context="256", mlp_embd="4096"), "mlp_hidden", "parameters"),
    (dict(beta2="1"), "beta2", "in [0, 1)"),
    (dict(ema="nan"), "ema", "EMA decay"),
    (dict(pack="maybe"), "pack", "not on or off"),
    (dict(pos_encoding="alibi"), "pos_encoding", "not one of"),
    (dict(d_model="12", n_heads="4", pos_encoding="rope"), "pos_encoding", "RoPE"),
    (dict(warmup="2.5"), "warmup", "whole number of steps"),
    (dict(grad_clip="0"), "grad_clip", "grad clip"),
])
def test_form_refuses_impossible_values_naming_the_field(changes, field, words):
    with pytest.raises(ConfigError) as err:
        form.config_from_form(course_form(**changes))
    assert err.value.field == field
    assert words in str(err.value)


def test_form_refuses_a_bad_dataset_before_anything_starts(tmp_path):
    with pytest.raises(ConfigError) as err:
        form.config_from_form(course_form(data=str(tmp_path / "missing.txt")))
    assert err.value.field == "data" and "no such file" in str(err.value)
    bad = tmp_path / "dots.txt"
    bad.write_text("anna\nbo.b\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 2"):
        form.config_from_form(course_form(data=str(bad)))
    assert not list(tmp_path.glob("runs/*"))


def test_unavailable_device_is_refused(monkeypatch):
    monkeypatch.setattr(form, "available_devices", lambda: ["auto", "cpu"])
    with pytest.raises(ConfigError) as err:
        form.config_from_form(course_form(device="cuda"))
    assert err.value.field == "device"


def test_the_estimate_measures_steps_and_scales_them_to_the_budget():
    from minigpt.control.estimate import estimate_run

    cfg = TrainConfig(d_model=16, n_heads=2, n_layers=1, batch_size=32, steps=400, eval_interval=100, device="cpu")
    est = estimate_run(cfg, trial_steps=2)
    assert est.device == "cpu" and est.steps == 400 and est.n_params > 0
    assert 0 < est.step_seconds < 5 and est.eval_seconds > 0
    # 400 steps, 5 evaluations during the run, val and test of the best checkpoint at the end
    assert est.seconds == pytest.approx(400 * est.step_seconds + 7 * est.eval_seconds)
    timed = estimate_run(TrainConfig(d_model=16, n_heads=2, n_layers=1, steps=None, time_s=30.0, device="cpu"), 2)
    assert timed.steps >= 1 and timed.seconds == pytest.approx(30.0 + 2 * timed.eval_seconds)


def test_copied_settings_start_a_run_with_the_identical_config(tmp_path):
    """Copy settings → form → start: the worker (``train --config``) trains exactly the old config."""
    old = tmp_path / "old-run"
    old.mkdir()
    original = TrainConfig(d_model=8, n_heads=2, n_layers=1, dropout=0.05, block_size=17, pos_encoding="rope",
                           tie_weights=True, batch_size=16, lr=3e-3, min_lr_ratio=0.2, warmup=3.0, beta1=0.8,
                           beta2=0.95, weight_decay=0.05, grad_clip=None, ema=0.0, pack=False, steps=12,
                           eval_interval=6, log_interval=3, device="cpu", dtype="float32", seed=7, split_seed=3)
    write_json_atomic(old / "config.json", original.to_dict())
    texts = form.form_from_config(run_processes.run_settings(old))
    run_dir = asyncio.run(run_processes.start_run(form.config_from_form(texts), root=tmp_path / "runs"))
    launch = json.loads((run_dir / run_processes.LAUNCH_FILE).read_text())
    assert launch["argv"][:3] == ["minigpt", "train", "--config"]
    wait_until(lambda: run_processes.run_state(run_dir).status not in ("starting", "running"), 120, "the run to end", step=0.2)
    assert run_processes.run_state(run_dir).status == "finished", run_processes.stderr_tail(run_dir)
    from minigpt.checkpoint import load_checkpoint

    trained = load_checkpoint(run_dir / "checkpoint").train_config
    assert trained == original.to_dict() and TrainConfig.from_dict(trained) == original


@pytest.mark.parametrize("delay_s", [0.0, 0.6])
def test_a_run_stopped_while_it_starts_reads_as_stopped_never_failed(tmp_path, delay_s):
    """Stop at once (the worker may not even have Python running yet) or while torch loads: the
    run ends stopped, never failed."""
    cfg = TrainConfig(d_model=8, n_heads=2, n_layers=1, batch_size=8, steps=5000, eval_interval=1000, device="cpu")
    run_dir = asyncio.run(run_processes.start_run(cfg, root=tmp_path / "runs"))
    time.sleep(delay_s)
    assert run_processes.run_state(run_dir).status == "starting"
    run_processes.stop_run(run_dir)
    view = run_processes.wait_until_stopped(run_dir, timeout=120)
    assert view.status == "stopped", (view.reason, run_processes.stderr_tail(run_dir))


def test_downsample_keeps_shape_ends_and_extremes():
    n = 100_000
    xs = list(range(n))
    ys = [((i * 7919) % 1000) / 1000 for i in range(n)]
    ys[54_321] = -5.0  # a spike that averaging would hide
    dx, dy = run_processes.downsample(xs, ys, 200)
    assert len(dx) <= 202
    assert dx[0] == 0 and dx[-1] == n - 1
    assert min(dy) == -5.0 and max(dy) == max(ys)
    assert dx == sorted(dx)
    assert run_processes.downsample([1, 2], [3, 4], 200) == ([1, 2], [3, 4])


def _status(run_dir, **values):
    base = {"state": "running", "pid": os.getpid(), "pid_start": process_start_time(os.getpid()), "step": 10,
            "total_steps": 100, "model": "gpt", "started_at": "2026-01-01T00:00:00+00:00"}
    base.update(values)
    write_json_atomic(run_dir / STATUS_FILE, base)


def test_run_state_tells_starting_from_died_before_status(tmp_path):
    write_json_atomic(tmp_path / run_processes.LAUNCH_FILE, {"pid": os.getpid(), "pid_start": process_start_time(os.getpid()),
                                                 "launched_ts": time.time()})
    assert run_processes.run_state(tmp_path).status == "starting"
    write_json_atomic(tmp_path / run_processes.LAUNCH_FILE, {"pid": 2 ** 22 + 12345, "launched_ts": time.time()})
    (tmp_path / run_processes.STDERR_FILE).write_text("Traceback …\nImportError: no module named torch\n")
    state = run_processes.run_state(tmp_path)
    assert state.status == "failed" and "ImportError" in state.reason
    assert run_processes.stderr_tail(tmp_path, 1) == ["ImportError: no module named torch"]


def test_stale_status_from_before_a_resume_is_not_believed(tmp_path):
    _status(tmp_path, state="stopped", pid=2 ** 22 + 1)
    time.sleep(0.01)
    write_json_atomic(tmp_path / run_processes.LAUNCH_FILE, {"pid": os.getpid(), "pid_start": process_start_time(os.getpid()),
                                                 "launched_ts": time.time()})
    assert run_processes.run_state(tmp_path).status == "starting"


def test_progress_and_eta():
    from minigpt.runs.listing import RunInfo

    info = RunInfo(path=None, name="r", status="running", step=25, total=100)
    frac, eta = run_processes.progress(info, {"step": 25, "elapsed_s": 10.0})
    assert frac == 0.25 and eta == pytest.approx(30.0)
    timed = RunInfo(path=None, name="r", status="running", step=5, total=60.0, total_unit="seconds")
    assert run_processes.progress(timed, {"elapsed_s": 15.0}) == (0.25, 45.0)
    assert run_processes.format_duration(75) == "1m15s" and run_processes.format_duration(None) == "–"


def test_controls_refuse_what_cannot_be_done(tmp_path):
    with pytest.raises(run_processes.RunControlError, match="not a run folder"):
        run_processes.delete_run(tmp_path)
    _status(tmp_path)  # running, and our own pid is alive
    with pytest.raises(run_processes.RunControlError, match="stop the run"):
        run_processes.delete_run(tmp_path)
    _status(tmp_path, state="finished")
    with pytest.raises(run_processes.RunControlError, match="nothing to stop"):
        run_processes.stop_run(tmp_path)
    _status(tmp_path, state="stopped")
    with pytest.raises(run_processes.RunControlError, match="nothing to resume"):
        import asyncio

        asyncio.run(run_processes.resume_run(tmp_path))
    run_processes.delete_run(tmp_path)
    assert not tmp_path.exists()


def test_comparison_table_orders_bigram_mlp_gpt():
    from minigpt.runs.listing import RunInfo

    infos = [RunInfo(path=None, name=n, status="finished", model=m, best_val=v, n_params=p)
             for n, m, v, p in [("g", "gpt", 2.0, 9000), ("b", "bigram", 2.45, 729), ("m", "mlp", 2.2, 12000),
                                ("g2", "gpt", 1.95, 30000)]]
    assert [r.name for r in run_processes.comparison_rows(infos)] == ["b", "m", "g2", "g"]
