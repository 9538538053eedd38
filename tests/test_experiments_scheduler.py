"""The scheduler against `minigpt train` workers on tiny models: a 2×2 sweep from the CLI with the
real trainer (tiny runs: d_model 8-16, one layer, batch 32), then pause and resume, kill -9 of the
scheduler (alone, then with its worker) and a run stopped by hand with the torch-free fake trainer
(``fake_trainer``, tests/helpers/minigpt_fake_trainer.py): what those check is the scheduler, which sees
only run folders and processes. Deadlines are generous because the CI machines are shared.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from click.testing import CliRunner

from minigpt import paths
from minigpt.control import run_processes
from minigpt.experiments import exports, folder, results, sweep_runner
from minigpt.experiments.presets import custom_spec, parse_grid_text
from tests.helpers.waiting import wait_until
from tui.cli import main

TINY = ["--set", "n_layers=1", "--set", "n_heads=2", "--set", "batch_size=32", "--set", "device=cpu"]


def state_of(exp_dir: Path) -> str:
    return results.collect(exp_dir).state


def events(exp_dir: Path, kind: str, run: str | None = None) -> list[dict]:
    return [e for e in folder.read_events(exp_dir) if e["event"] == kind and (run is None or e.get("run") == run)]


def training_with_checkpoint(exp_dir: Path, skip: set[str] = frozenset()) -> str | None:
    """A run whose worker is training and has saved a checkpoint: a run caught in the middle."""
    for run in folder.load_experiment(exp_dir).runs:
        run_dir = exp_dir / run.name
        if run.name not in skip and run_dir.exists() and run_processes.run_state(run_dir).status == "running" \
                and run_processes.has_checkpoint(run_dir):
            return run.name
    return None


def first_steps_logged(run_dir: Path) -> int:
    """How many times the run logged step 1: more than once means it was trained again from zero."""
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return sum(1 for ln in lines if json.loads(ln).get("step") == 1)


def assert_complete_and_never_twice(exp_dir: Path) -> None:
    res = results.collect(exp_dir)
    assert res.state == "finished", results.format_table(res)
    for run in res.runs:
        assert run.status == "finished" and run.val_loss is not None and run.train_loss is not None, run
        assert len(events(exp_dir, "start", run.name)) == 1, folder.read_events(exp_dir)
        assert first_steps_logged(run.path) == 1, run.name


def test_cli_runs_a_2x2_sweep_to_the_end_and_prints_table_plot_and_fit():
    args = ["sweep", "--axis", "d_model=8,16", "--axis", "dropout=0,0.1", "--steps", "30", "--name", "grid",
            "--jobs", "2", *TINY]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    exp_dir = paths.runs_dir() / "grid"
    assert_complete_and_never_twice(exp_dir)
    if sweep_runner.max_jobs() >= 2:  # two runs trained side by side: the second began before the first ended
        starts, ends = events(exp_dir, "start"), events(exp_dir, "finished")
        assert starts[1]["t"] < ends[0]["t"]
    out = result.output
    assert "grid: finished, 4/4 runs finished" in out
    assert out.count("finished") >= 5 and "d_model  dropout  params" in out
    assert "val loss against parameters (log-log)" in out and "x: parameters N" in out
    status = CliRunner().invoke(main, ["sweep", "--status", "grid", "--json"])
    data = json.loads(status.output)
    assert [r["steps"] for r in data["runs"]] == [30] * 4 and {r["status"] for r in data["runs"]} == {"finished"}
    assert [r["axis.d_model"] for r in data["runs"]] == [8, 8, 16, 16]
    for name in exports.EXPORTS:
        assert (exp_dir / name).exists(), name
    listed = CliRunner().invoke(main, ["runs"])
    assert sum(line.startswith("grid-d") for line in listed.output.splitlines()) == 4


def test_pause_stops_the_runs_cleanly_and_resume_finishes_them(fake_trainer):
    runner = CliRunner()
    args = ["sweep", "--axis", "d_model=8,16", "--time", "3", "--set", "eval_interval=20", "--name", "pz",
            "--detach", *TINY]
    assert runner.invoke(main, args).exit_code == 0
    exp_dir = paths.runs_dir() / "pz"
    caught = wait_until(lambda: training_with_checkpoint(exp_dir), 90, "a run training with a checkpoint")
    out = runner.invoke(main, ["sweep", "--pause", "pz"])
    assert "pause requested" in out.output
    wait_until(lambda: state_of(exp_dir) == "paused", 60, "the sweep to pause")
    assert run_processes.run_state(exp_dir / caught).status == "stopped" and run_processes.has_checkpoint(exp_dir / caught)
    assert folder.scheduler_alive(exp_dir) is None
    out = runner.invoke(main, ["sweep", "--resume", "pz"])
    assert "continues the unfinished runs" in out.output
    wait_until(lambda: state_of(exp_dir) == "finished", 120, "the resumed sweep to finish", step=0.3)
    assert_complete_and_never_twice(exp_dir)
    assert len(events(exp_dir, "resume", caught)) == 1


def test_kill_9_of_the_scheduler_mid_sweep_then_a_restart_finishes_every_run_once(fake_trainer):
    # Two runs are enough: the scheduler runs one at a time (start_sync's one job), so the first is
    # the run adopted in part 1 and the second the run killed and resumed in part 2.
    grid = parse_grid_text("d_model=8,16 time=3 n_layers=1 n_heads=2 batch_size=32 device=cpu eval_interval=20")
    exp = folder.create_experiment(custom_spec("k9", grid.axes, grid.budget, grid.base))
    sweep_runner.start_sync(exp.dir)

    # 1. Kill the scheduler alone: its worker trains on, and the new scheduler adopts it.
    first = wait_until(lambda: training_with_checkpoint(exp.dir), 90, "the first run to train")
    worker = run_processes.run_state(exp.dir / first).alive_pid
    os.kill(folder.read_scheduler(exp.dir)["pid"], signal.SIGKILL)
    wait_until(lambda: folder.scheduler_alive(exp.dir) is None, 10, "the scheduler to die")
    assert state_of(exp.dir) == "interrupted"
    sweep_runner.start_sync(exp.dir)
    wait_until(lambda: run_processes.run_state(exp.dir / first).status == "finished", 60, "the adopted run to finish")
    assert len(events(exp.dir, "start", first)) == 1 and not events(exp.dir, "resume", first)
    assert runs_pid(exp.dir / first) == worker  # the same worker finished it

    # 2. Kill the scheduler and the worker of a later run: the restart resumes it from its checkpoint.
    later = wait_until(lambda: training_with_checkpoint(exp.dir, skip={first}), 90, "a later run to train")
    os.kill(folder.read_scheduler(exp.dir)["pid"], signal.SIGKILL)
    os.kill(run_processes.run_state(exp.dir / later).alive_pid, signal.SIGKILL)
    wait_until(lambda: run_processes.run_state(exp.dir / later).status == "failed", 10, "the killed run to show failed")
    # A killed process takes a moment to be gone (tearing down its memory); until then a restart
    # rightly says the scheduler is still running.
    wait_until(lambda: folder.scheduler_alive(exp.dir) is None, 10, "the scheduler to die")
    result = CliRunner().invoke(main, ["sweep", "--resume", "k9"])
    assert result.exit_code == 0 and "continues" in result.output
    wait_until(lambda: state_of(exp.dir) == "finished", 150, "the restarted sweep to finish", step=0.3)
    assert_complete_and_never_twice(exp.dir)
    assert len(events(exp.dir, "resume", later)) == 1
    assert len(events(exp.dir, "scheduler_start")) == 3


def runs_pid(run_dir: Path) -> int | None:
    return json.loads((run_dir / "status.json").read_text()).get("pid")


def test_a_second_scheduler_on_the_same_experiment_does_nothing(tmp_path):
    grid = parse_grid_text("d_model=8,16 steps=5 n_layers=1 n_heads=2")
    exp = folder.create_experiment(custom_spec("lock", grid.axes, grid.budget, grid.base))
    held = sweep_runner.acquire_lock(exp.dir)
    try:
        assert sweep_runner.acquire_lock(exp.dir) is None
        assert sweep_runner.main([str(exp.dir)]) == 0  # exits at once: another holds the lock
        assert not any((exp.dir / r.name).exists() for r in exp.runs)
    finally:
        held.close()
    assert sweep_runner.acquire_lock(exp.dir) is not None  # released with its holder


def test_a_run_stopped_by_hand_is_left_alone_until_the_experiment_is_resumed(fake_trainer):
    grid = parse_grid_text("d_model=8,16 time=3 n_layers=1 n_heads=2 batch_size=32 device=cpu eval_interval=20")
    exp = folder.create_experiment(custom_spec("held", grid.axes, grid.budget, grid.base))
    sweep_runner.start_sync(exp.dir)
    first = wait_until(lambda: training_with_checkpoint(exp.dir), 90, "the first run to train")
    run_processes.stop_run(exp.dir / first)  # what the runs screen's stop key does
    wait_until(lambda: state_of(exp.dir) == "paused", 120, "the scheduler to finish the rest and pause")
    assert run_processes.run_state(exp.dir / first).status == "stopped"
    assert [r.status for r in results.collect(exp.dir).runs] == ["stopped", "finished"]
    assert events(exp.dir, "held", first) and not events(exp.dir, "resume", first)
    sweep_runner.start_sync(exp.dir)
    wait_until(lambda: state_of(exp.dir) == "finished", 90, "the resumed experiment to finish", step=0.3)
    assert_complete_and_never_twice(exp.dir)


def test_phases_read_from_the_run_folders():
    """What a (re)started scheduler decides from disk alone, run folder by run folder."""
    from minigpt.runs.files import process_start_time, write_json_atomic

    grid = parse_grid_text("d_model=8,16 dropout=0,0.1 steps=5 n_layers=1 n_heads=2")
    exp = folder.create_experiment(custom_spec("ph", grid.axes, grid.budget, grid.base))
    sched = sweep_runner.Scheduler(exp.dir)
    names = [r.name for r in exp.runs]
    assert sched.phase(names[0]) == "fresh"  # no folder yet
    young = exp.dir / names[1]
    young.mkdir()
    write_json_atomic(young / "config.json", exp.runs[1].config)
    # A scheduler killed mid-launch: its worker may yet appear, so the run is not started again
    # (the run-folder schema reads a young config without status as starting).
    assert sched.phase(names[1]) in ("wait", "active")
    old = time.time() - 600  # past both graces: the scheduler's and the run-folder schema's
    for p in (young, young / "config.json"):
        os.utime(p, (old, old))
    assert sched.phase(names[1]) == "fresh"  # nobody came: start it from scratch
    alive = exp.dir / names[2]
    alive.mkdir()
    write_json_atomic(alive / "status.json", {"state": "running", "pid": os.getpid(),
                                              "pid_start": process_start_time(os.getpid())})
    assert sched.phase(names[2]) == "active"  # a live worker, whoever started it: never doubled
    done = exp.dir / names[3]
    done.mkdir()
    write_json_atomic(done / "status.json", {"state": "finished"})
    assert sched.phase(names[3]) == "finished"
    (done / "status.json").write_text(json.dumps({"state": "stopped"}))
    (done / "last").mkdir()
    (done / "last" / "config.json").write_text("{}")
    assert sched.phase(names[3]) == "resume"  # stopped with a checkpoint
    for _ in range(sweep_runner.MAX_FAILURES):
        folder.append_event(exp.dir, "failed", names[3])
    assert sched.phase(names[3]) == "given_up"
