"""minigpt.runs.schema, files, lock and resolve: the versioned run-folder schema and its readers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minigpt.errors import ConfigError, RunBusyError, RunError
from minigpt.numbers import number_text
from minigpt.runs import listing
from minigpt.runs.files import RunWriter, edit_status, truncate_metrics, write_json_atomic, write_run_config
from minigpt.runs.lock import RunLock, is_locked, lock_holder
from minigpt.runs.metrics import read_metrics
from minigpt.runs.resolve import resolve_checkpoint, resolve_run
from minigpt.runs.schema import (
    CONFIG_VERSION,
    STATUS_VERSION,
    RunState,
    RunStatus,
    default_run_name,
    metrics_line,
    read_config_values,
    read_status,
)
from minigpt.training.options import TrainConfig, load_run_config

REPO = Path(__file__).resolve().parents[1]


def test_states_are_one_enum_and_compare_as_their_words():
    assert [str(s) for s in RunState] == ["starting", "running", "stopped", "finished", "failed", "broken"]
    assert RunState.RUNNING == "running" and RunState.STARTING.active and not RunState.STOPPED.active
    assert json.dumps({"s": RunState.FAILED}) == '{"s": "failed"}'


@pytest.mark.parametrize("config, name", [
    ({"model": "gpt", "d_model": 64, "n_layers": 4, "lr": 0.005}, "gpt d64 L4 lr5e-3"),
    ({"model": "gpt", "d_model": 32, "n_layers": 2, "lr": 3e-4, "pos_encoding": "rope", "tie_weights": True},
     "gpt d32 L2 rope tied lr3e-4"),
    ({"model": "mlp", "mlp_context": 3, "mlp_hidden": 200, "lr": 0.1}, "mlp ctx3 h200 lr0.1"),
    ({"model": "bigram"}, "bigram"),
    (None, "run"),
])
def test_default_names_tell_runs_apart_by_their_settings(config, name):
    assert default_run_name(config) == name


def test_short_numbers():
    assert [number_text(x) for x in (5e-3, 1.5e-3, 0.25, 1e6, 0.0)] == ["5e-3", "1.5e-3", "0.25", "1e6", "0"]


def test_status_round_trips_and_is_never_written_with_nan():
    st = RunStatus(state=RunState.FINISHED, name="mine", note="first try", step=5, best_val=float("nan"),
                   val_loss=2.5, world_size=2, failure_reason=None)
    raw = st.to_dict()
    assert raw["format_version"] == STATUS_VERSION and raw["state"] == "finished" and raw["best_val"] is None
    json.dumps(raw, allow_nan=False)
    back = RunStatus.from_dict(json.loads(json.dumps(raw)))
    assert back.state is RunState.FINISHED and (back.name, back.note, back.world_size) == ("mine", "first try", 2)


def test_round1_status_migrates_with_name_from_config_and_failure_reason():
    v1 = {"state": "failed", "pid": 5, "step": 3, "total_steps": 10, "model": "gpt", "error": "boom",
          "started_at": "2025-01-01T00:00:00+00:00", "best_val": None}
    st = RunStatus.from_dict(v1, config={"model": "gpt", "d_model": 16, "n_layers": 1, "lr": 0.005})
    assert (st.name, st.note, st.world_size, st.failure_reason) == ("gpt d16 L1 lr5e-3", "", 1, "boom")


def test_round1_diverged_finished_run_is_read_as_failed():
    v1 = json.loads('{"state": "finished", "step": 60, "best_val": NaN, "val_loss": NaN, "test_loss": NaN}')
    st = RunStatus.from_dict(v1)
    assert st.state is RunState.FAILED and st.best_val is None and "diverged" in st.failure_reason


@pytest.mark.parametrize("changes, words", [
    ({"state": None}, "state should be one of"),
    ({"state": "paused"}, "state should be one of"),
    ({"started_at": 12345}, "started_at should be an ISO date"),
    ({"best_val": "0.5"}, "best_val should be a finite number"),
    ({"model": ["gpt"]}, "model should be text"),
    ({"step": -1}, "step should be a whole number"),
    ({"step": True}, "step should be a whole number"),
    ({"world_size": 0}, "world_size should be a whole number ≥ 1"),
    ({"format_version": 99}, "newer minigpt"),
    ({"format_version": "2"}, "format_version"),
])
def test_a_wrong_field_is_named(changes, words):
    raw = RunStatus(state=RunState.RUNNING).to_dict() | changes
    with pytest.raises(RunError, match=words):
        RunStatus.from_dict(raw)


def test_config_is_versioned_with_an_absolute_data_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "names.txt").write_text("anna\nbob\n")
    write_run_config(tmp_path, TrainConfig(data="names.txt").to_dict())
    raw = json.loads((tmp_path / "config.json").read_text())
    assert raw["format_version"] == CONFIG_VERSION and raw["data"] == str(tmp_path / "names.txt")
    assert load_run_config(tmp_path).data == str(tmp_path / "names.txt")
    assert "format_version" not in read_config_values(tmp_path / "config.json")


@pytest.mark.parametrize("version, expected", [(None, "adamw"), (2, "adamw"), (3, "muon")])
def test_configs_from_before_the_optimizer_option_keep_adamw(tmp_path, version, expected):
    """Runs saved before Muon became the default trained with AdamW: resuming them keeps it."""
    raw = {"model": "gpt", "steps": 10}
    if version is not None:
        raw.update(format="minigpt-run-config", format_version=version)
    (tmp_path / "config.json").write_text(json.dumps(raw))
    assert load_run_config(tmp_path).optimizer == expected


@pytest.mark.parametrize("version", [None, 2, 3])
def test_configs_from_before_the_speedrun_tricks_keep_them_off(tmp_path, version):
    """A run saved before format 4 trained without the tricks: resuming it keeps them off even if
    a later default turns one on (the migration writes each one's off value)."""
    from minigpt.runs.schema import CONFIG_V4_OFF

    raw = {"model": "gpt", "steps": 10}
    if version is not None:
        raw.update(format="minigpt-run-config", format_version=version)
    (tmp_path / "config.json").write_text(json.dumps(raw))
    values = read_config_values(tmp_path / "config.json")
    assert {k: values[k] for k in CONFIG_V4_OFF} == CONFIG_V4_OFF
    cfg = load_run_config(tmp_path)
    assert (cfg.bigram, cfg.smear, cfg.softcap, cfg.momentum_warmup, cfg.batch_ramp) == ("off", False, None, 0, 0.0)


def test_the_tricks_round_trip_through_a_version_4_config(tmp_path):
    tricks = dict(bigram="residual", smear=True, value_residual=True, x0_shortcut=True, softcap=15.0,
                  zero_init=True, mtp_weight=0.25, momentum_warmup=300, batch_ramp=0.3)
    write_run_config(tmp_path, TrainConfig(**tricks).to_dict())
    assert json.loads((tmp_path / "config.json").read_text())["format_version"] == CONFIG_VERSION
    cfg = load_run_config(tmp_path)
    assert {k: getattr(cfg, k) for k in tricks} == tricks


def test_a_config_saved_by_format_5_loads_as_sp_without_z_loss():
    """tests/fixtures/config-v5/config.json was written by the release before μP and z-loss (format
    5): it opens as a standard-parametrization run with no z-loss, its own options kept."""
    from pathlib import Path

    from minigpt.runs.schema import CONFIG_V6_OFF

    folder = Path(__file__).parent / "fixtures" / "config-v5"
    assert json.loads((folder / "config.json").read_text())["format_version"] == 5
    values = read_config_values(folder / "config.json")
    assert {k: values[k] for k in CONFIG_V6_OFF} == CONFIG_V6_OFF == {"parametrization": "sp", "z_loss": 0.0}
    cfg = load_run_config(folder)
    assert (cfg.parametrization, cfg.z_loss, cfg.qk_norm, cfg.softcap, cfg.optimizer) == ("sp", 0.0, True, 30.0, "adamw")
    assert cfg.model_config(27, 16).parametrization == "sp"


def test_mup_and_z_loss_round_trip_through_a_version_6_config(tmp_path):
    write_run_config(tmp_path, TrainConfig(parametrization="mup", optimizer="adamw", z_loss=1e-4).to_dict())
    assert json.loads((tmp_path / "config.json").read_text())["format_version"] == CONFIG_VERSION == 6
    cfg = load_run_config(tmp_path)
    assert (cfg.parametrization, cfg.z_loss) == ("mup", 1e-4)


def test_config_from_a_newer_release_is_refused(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"format_version": CONFIG_VERSION + 1, "model": "gpt"}))
    with pytest.raises(ConfigError, match="newer minigpt"):
        load_run_config(tmp_path)


def test_metrics_lines_are_strict_json_and_readers_skip_the_header(tmp_path):
    assert metrics_line({"step": 3, "train_loss": float("nan")}) == '{"step": 3, "train_loss": null}\n'
    cfg = TrainConfig(steps=10)
    writer = RunWriter(cfg, tmp_path, None)
    writer.log({"step": 1, "train_loss": 3.0})
    writer.log({"step": 2, "train_loss": float("inf"), "lr": 0.1})
    writer.close()
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["format"] == "minigpt-metrics"
    for line in lines:
        json.loads(line, parse_constant=lambda c: pytest.fail(f"bare {c} in metrics.jsonl"))
    records, _ = read_metrics(tmp_path)
    assert records == [{"step": 1, "train_loss": 3.0}, {"step": 2, "lr": 0.1}]


def test_round1_metrics_with_bare_nan_are_read_without_the_nan(tmp_path):
    (tmp_path / "metrics.jsonl").write_text('{"step": 1, "train_loss": 3.1}\n{"step": 2, "train_loss": NaN}\n')
    assert read_metrics(tmp_path)[0] == [{"step": 1, "train_loss": 3.1}, {"step": 2}]


def test_truncate_metrics_keeps_the_steps_up_to_the_checkpoint(tmp_path):
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "train_loss": 1.0}) + "\n"
                                                    for s in (1, 10, 20, 25, 30)) + '{"step": 35, "tra')
    assert truncate_metrics(tmp_path, 20) == 2
    assert [r["step"] for r in read_metrics(tmp_path)[0]] == [1, 10, 20]


def test_a_rename_while_the_trainer_writes_is_kept(tmp_path):
    writer = RunWriter(TrainConfig(d_model=32, n_layers=2, steps=10), tmp_path, None)
    writer.write_status()
    assert read_status(tmp_path / "status.json").name == "gpt d32 L2 lr5e-3"
    edit_status(tmp_path, name="wide and shallow", note="compare with d64")
    writer.write_status(step=4)  # the trainer's next write keeps the learner's words
    st = read_status(tmp_path / "status.json")
    assert (st.name, st.note, st.step) == ("wide and shallow", "compare with d64", 4)
    writer.close()
    with pytest.raises(RunError, match="one line"):
        edit_status(tmp_path, note="two\nlines")


HOLD_LOCK = """
import sys, time
from minigpt.runs.lock import RunLock
RunLock(sys.argv[1]).acquire()
print("locked", flush=True)
time.sleep(60)
"""


def test_the_lock_refuses_a_second_trainer_and_dies_with_its_process(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert is_locked(tmp_path) and lock_holder(tmp_path) == holder.pid
        with pytest.raises(RunBusyError, match=f"pid {holder.pid}"):
            RunLock(tmp_path).acquire()
    finally:
        holder.kill()
        holder.wait()
    assert not is_locked(tmp_path)
    with RunLock(tmp_path):
        assert is_locked(tmp_path)
    assert not is_locked(tmp_path)


def test_resolve_run_by_folder_path_folder_name_or_own_name(tmp_path):
    root = tmp_path / "runs"
    for folder, name in (("a", "gpt d64"), ("b", "mlp"), ("c", "mlp")):
        (root / folder).mkdir(parents=True)
        write_json_atomic(root / folder / "status.json", RunStatus(state=RunState.STOPPED, name=name,
                                                                   started_at=f"2025-01-0{ord(folder) - 96}T00:00:00").to_dict())
    assert resolve_run(str(root / "a"), root) == root / "a"
    assert resolve_run("b", root) == root / "b"
    assert resolve_run("gpt d64", root) == root / "a"
    assert resolve_run(None, root) == root / "c"  # the newest
    with pytest.raises(RunError, match="2 runs are named 'mlp'"):
        resolve_run("mlp", root)
    with pytest.raises(RunError, match="no such run"):
        resolve_run("zzz", root)
    with pytest.raises(RunError, match="no checkpoint yet"):
        resolve_checkpoint("a", root)


def test_a_folder_without_status_is_starting_only_while_young_or_locked(tmp_path):
    write_run_config(tmp_path, TrainConfig().to_dict())
    assert listing.read_run(tmp_path).status is RunState.STARTING
    old = time.time() - 3600
    os.utime(tmp_path / "config.json", (old, old))
    info = listing.read_run(tmp_path)
    assert info.status is RunState.FAILED and "never started" in info.reason
    with RunLock(tmp_path):
        assert listing.read_run(tmp_path).status is RunState.STARTING


def test_one_notation_for_learning_rates_that_reads_back():
    from minigpt.experiments.spec import value_text
    from minigpt.training.options import format_value

    for x, text in ((1e-2, "1e-2"), (5e-4, "5e-4"), (2.5e-3, "2.5e-3"), (0.25, "0.25"), (1e-8, "1e-8"),
                    (1.23456e-3, "1.23456e-3"), (3e4, "3e4")):
        assert number_text(x) == text and float(text) == x
        assert value_text(x) == text  # run names, sweep names, the runs list
    assert format_value(5e-3) == "5e-3" and format_value(0.1) == "0.1" and format_value(20.0) == "20"


def test_runs_of_the_same_settings_get_distinct_default_names(tmp_path):
    from minigpt.runs.files import distinct_name

    for i, expected in enumerate(["gpt d64 L4 lr5e-3", "gpt d64 L4 lr5e-3 (2)", "gpt d64 L4 lr5e-3 (3)"]):
        run = tmp_path / f"run{i}"
        run.mkdir()
        name = distinct_name("gpt d64 L4 lr5e-3", run)
        assert name == expected
        (run / "status.json").write_text(json.dumps({"name": name}), encoding="utf-8")


def test_run_actions_follow_the_state_and_the_checkpoint(tmp_path):
    from dataclasses import astuple

    from minigpt.control.run_processes import run_actions

    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    assert astuple(run_actions(RunState.RUNNING, tmp_path)) == (True, False, False, True)
    assert run_actions(RunState.STOPPED, tmp_path).resume is False  # no checkpoint: nothing to resume
    (tmp_path / "last").mkdir()
    (tmp_path / "last" / "config.json").write_text("{}", encoding="utf-8")
    assert run_actions(RunState.STOPPED, tmp_path).resume and run_actions(RunState.FAILED, tmp_path).resume
    assert not run_actions(RunState.FINISHED, tmp_path).resume and run_actions(RunState.FINISHED, tmp_path).delete
