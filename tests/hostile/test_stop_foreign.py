"""`minigpt stop` (and the app's stop, and a guest's clean-up) signal only a process proven to be
the run's trainer: a run folder is data, and its status or launch record may name any pid."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from minigpt import paths, serving_policy
from minigpt.cli import main
from minigpt.control import run_processes
from minigpt.errors import RunControlError
from minigpt.runs.lock import RunLock
from minigpt.spawn import process_start_time
from tests.helpers.hostile import one_error_line


def _alive(proc: subprocess.Popen) -> bool:
    time.sleep(0.2)  # a signal, had one been sent, is delivered by now
    return proc.poll() is None


@pytest.fixture
def victim():
    """An unrelated process of the same user (the sweep used `sleep`)."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def trainer_lookalike():
    """Not tried by the sweep: a process whose command line says `minigpt … train` but that holds
    no run's lock (another run's trainer, or a decoy)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", "minigpt.cli", "train"])
    yield proc
    proc.kill()
    proc.wait()


def _running_run(name: str, pid: int, pid_start) -> Path:
    run = paths.runs_dir() / name
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"model": "gpt"}), encoding="utf-8")
    (run / "status.json").write_text(json.dumps({"state": "running", "pid": pid, "pid_start": pid_start,
                                                 "step": 3, "updated_at": "2026-01-01T00:00:00+00:00"}),
                                     encoding="utf-8")
    return run


def test_a_status_naming_a_foreign_pid_with_no_start_time_is_refused(victim):
    """The sweep's reproduction."""
    _running_run("evil", victim.pid, None)
    line = one_error_line(CliRunner().invoke(main, ["stop", "evil", "--no-wait"]))
    assert f"pid {victim.pid} is not this run's trainer" in line
    assert _alive(victim)


def test_the_right_start_time_proves_nothing_either(victim):
    _running_run("evil", victim.pid, process_start_time(victim.pid))
    assert "not this run's trainer" in one_error_line(CliRunner().invoke(main, ["stop", "evil"]))
    assert _alive(victim)


def test_a_trainer_command_line_without_the_lock_is_refused(trainer_lookalike):
    run = _running_run("decoy", trainer_lookalike.pid, process_start_time(trainer_lookalike.pid))
    with pytest.raises(RunControlError, match="not this run's trainer"):
        run_processes.stop_run(run)  # what the app's stop key calls
    assert _alive(trainer_lookalike)


def test_a_lock_held_by_someone_else_is_no_proof(trainer_lookalike):
    """The lock is taken (by this test process), the status names another pid: refused."""
    run = _running_run("decoy", trainer_lookalike.pid, None)
    with RunLock(run):
        with pytest.raises(RunControlError, match="not this run's trainer"):
            run_processes.stop_run(run)
    assert _alive(trainer_lookalike)


def test_a_forged_launch_record_naming_another_folder_is_refused(trainer_lookalike):
    """A launch record (the app's, before the worker writes its status) with the right start time
    but a command line that names no such folder."""
    run = paths.runs_dir() / "starting"
    run.mkdir(parents=True)
    (run / "config.json").write_text("{}", encoding="utf-8")
    (run / "launch.json").write_text(json.dumps({"pid": trainer_lookalike.pid, "launched_ts": time.time(),
                                                 "pid_start": process_start_time(trainer_lookalike.pid)}),
                                     encoding="utf-8")
    assert run_processes.run_state(run).status == "starting"
    with pytest.raises(RunControlError, match="not this run's trainer"):
        run_processes.stop_run(run)
    assert _alive(trainer_lookalike)


def test_a_guest_folder_clean_up_leaves_foreign_processes_alone(victim):
    _running_run("evil", victim.pid, None)
    assert serving_policy.stop_runs_in(paths.user_data_dir(), grace_s=0.2) == []
    assert _alive(victim)
