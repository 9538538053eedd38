"""Runaway sweeps: a grid is counted from its axes before any point or run is built, refused past
``MAX_RUNS`` with the count, and a sweep says its size and cost before it starts any work.

A TOML grid of thousands of points and an ``--axis`` of thousands of values once held gigabytes
before printing anything; here each is refused in one line, within seconds, in a child whose
memory is watched.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest
from click.testing import CliRunner

from minigpt.errors import ConfigError
from minigpt.experiments.spec import MAX_RUNS, Axis, Budget, ExperimentSpec
from tests.helpers.hostile import REPO, bounded, one_error_line
from tui.cli import main

MEMORY_LIMIT = 2 << 30


def sweep_limited(*args: str) -> subprocess.CompletedProcess:
    """``minigpt sweep`` in a child that cannot allocate more than MEMORY_LIMIT."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    return subprocess.run([sys.executable, "-m", "minigpt.cli", "sweep", *args], capture_output=True, text=True,
                          timeout=60, preexec_fn=limit, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})


def refused(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), lines
    return lines[0]


def test_an_axis_of_thousands_of_values_is_refused_with_its_count(isolated_data_dir):
    values = ",".join(str(i) for i in range(1, 5001))
    line = refused(sweep_limited("--axis", f"seed={values}", "--steps", "10"))
    assert "this grid has 5,000 runs" in line and f"more than the {MAX_RUNS}" in line, line
    assert not (isolated_data_dir / "experiments").exists() or not any((isolated_data_dir / "experiments").iterdir())


def test_a_toml_grid_of_millions_of_points_is_counted_not_built(tmp_path, isolated_data_dir):
    axes = "\n".join(f"{name} = [{', '.join(str(v) for v in values)}]" for name, values in [
        ("seed", range(100)), ("lr", [i / 1e4 for i in range(1, 101)]), ("batch_size", range(1, 101))])
    grid = tmp_path / "grid.toml"
    grid.write_text(f'name = "huge"\n[axes]\n{axes}\n[budget]\nsteps = 10\n')
    line = refused(sweep_limited(str(grid)))
    assert "this grid has 1,000,000 runs (100 × 100 × 100 values)" in line, line


def test_many_small_axes_multiply(isolated_data_dir):
    """Not in the sweep: nine axes of only two values each are 512 runs."""
    axes = [Axis(name, (1, 2)) for name in ["seed", "split_seed", "n_layers", "batch_size", "eval_interval",
                                            "log_interval", "mlp_context", "mlp_embd", "mlp_hidden"]]
    with bounded(10), pytest.raises(ConfigError, match="this grid has 512 runs"):
        ExperimentSpec(name="wide", axes=axes, budget=Budget("steps", 10))


@pytest.mark.parametrize("args, words", [
    (["--axis", "lr=1e-3,2e-3", "--steps", "100000000000"], "steps budget must be at most"),
    (["--axis", "lr=1e-3,2e-3", "--time", "1e9"], "time budget must be at most"),
    (["--axis", "d_model=16,32", "--compute", "1e30"], "compute budget must be at most"),
    (["--axis", "lr=1e-3,2e-3", "--steps", "10", "--jobs", "0"], "--jobs must be from 1 to 64"),
])
def test_budgets_and_jobs_have_bounds(args, words, isolated_data_dir):
    with bounded(30):
        line = one_error_line(CliRunner().invoke(main, ["sweep", *args]))
    assert words in line, line


def test_a_grid_at_the_cap_is_accepted():
    spec = ExperimentSpec(name="cap", axes=[Axis("seed", tuple(range(MAX_RUNS)))], budget=Budget("steps", 10))
    assert spec.n_runs == MAX_RUNS


def test_the_estimate_is_shown_before_any_work(isolated_data_dir, monkeypatch):
    """The sweep says how many runs and how long before it writes or starts anything."""
    from minigpt.experiments import console, folder

    def no_work(*args, **kwargs):
        raise ConfigError("stopped before any work")

    monkeypatch.setattr(folder, "create_experiment", no_work)
    result = CliRunner().invoke(main, ["sweep", "--axis", "lr=1e-3,2e-3,3e-3", "--time", "60", "--jobs", "1"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[0].startswith("experiment sweep: 3 runs, 60 s a run, about 3 min with 1 job(s)"), lines
    assert lines[-1] == "Error: stopped before any work"
    assert console.estimate_text(ExperimentSpec(name="s", axes=[Axis("lr", (0.1, 0.2))],
                                                budget=Budget("steps", 500)), 2).endswith("1,000 steps in all")
