"""Round-1 data keeps loading: run folders and checkpoints written by the round-1 release.

``tests/fixtures/round1/`` was made by the code as it stood before the saved-data schema was
versioned (real ``minigpt train`` runs on the embedded names):

- ``runs/run-gpt``: a finished 20-step run (d16 L1, checkpoints at steps 10 and 20);
- ``runs/run-gpt-stopped``: a run stopped with SIGTERM at step 36 of 1000 (rope, tied weights);
- ``checkpoint-mlp``: the best checkpoint of a 20-step MLP run;
- ``diverged/run-lr1e6``: a 20-step run at learning rate 1e6 that round 1 saved as "finished" with
  NaN losses and NaN weights (tests/hostile/test_training_numbers.py reads it).

Every test works on a copy: the fixtures themselves are never written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from minigpt.checkpoint import load_checkpoint
from minigpt.cli import main
from minigpt.runs import listing
from minigpt.runs.metrics import read_metrics
from minigpt.training.loop import train

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "round1"


@pytest.fixture
def round1(tmp_path) -> Path:
    root = tmp_path / "round1"
    shutil.copytree(FIXTURES, root)
    return root


def test_round1_runs_read_with_their_states(round1):
    finished = listing.read_run(round1 / "runs" / "run-gpt")
    assert (str(finished.status), finished.step, finished.total, finished.model) == ("finished", 20, 20, "gpt")
    assert finished.best_val == pytest.approx(2.8941802325581394)
    stopped = listing.read_run(round1 / "runs" / "run-gpt-stopped")
    assert (str(stopped.status), stopped.step, stopped.total) == ("stopped", 36, 1000)


def test_round1_runs_are_listed_newest_first(round1):
    listed = listing.list_runs(round1 / "runs")
    assert [r.name for r in listed] == ["run-gpt-stopped", "run-gpt"]


@pytest.mark.parametrize("where, kind, step", [("runs/run-gpt/checkpoint", "gpt", 20), ("runs/run-gpt/last", "gpt", 20),
                                               ("runs/run-gpt-stopped/checkpoint", "gpt", 36),
                                               ("checkpoint-mlp", "mlp", 20)])
def test_round1_checkpoints_load(round1, where, kind, step):
    ck = load_checkpoint(round1 / where)
    assert ck.kind == kind and ck.state["step"] == step and ck.vocab.size == 27


def test_round1_checkpoints_sample_and_evaluate_from_the_cli(round1):
    runner = CliRunner()
    sampled = runner.invoke(main, ["sample", "--checkpoint", str(round1 / "checkpoint-mlp"), "-n", "3",
                                   "--seed", "1", "--json"])
    assert sampled.exit_code == 0, sampled.output
    assert len(json.loads(sampled.output)) == 3
    evaluated = runner.invoke(main, ["eval", "--checkpoint", str(round1 / "runs" / "run-gpt"), "--json"])
    assert evaluated.exit_code == 0, evaluated.output
    assert json.loads(evaluated.output)["val"] == pytest.approx(2.8941802325581394, abs=1e-4)


def test_round1_stopped_run_resumes(round1):
    run = round1 / "runs" / "run-gpt-stopped"
    # A shorter budget than the 1000 steps it was started with, so the test trains 14 steps.
    config = json.loads((run / "config.json").read_text())
    config["steps"] = 50
    (run / "config.json").write_text(json.dumps(config))
    status = train(None, run, resume=True)
    assert (str(status["state"]), status["step"]) == ("finished", 50)
    steps = [r["step"] for r in read_metrics(run)[0]]
    assert steps[-1] == 50 and 36 in steps and steps == sorted(steps)
