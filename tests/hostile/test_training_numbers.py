"""Hostile training numbers: a learning rate that makes the loss NaN, a batch that does once, a
round-1 run that diverged and was saved as finished.

A non-finite loss, gradient or validation loss stops the run as failed with the reason (or skips
the batch when the run asks for it), is never kept as the best checkpoint, and never reaches
metrics.jsonl as a bare NaN; a NaN checkpoint is refused with one ``Error:`` line.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from minigpt import paths
from minigpt.checkpoint import load_checkpoint
from minigpt.cli import main
from minigpt.errors import TrainingDiverged
from minigpt.runs import listing
from minigpt.runs.metrics import read_metrics
from minigpt.training import loop, trainer
from minigpt.training.options import TrainConfig
from tests.helpers.hostile import one_error_line

REPO = Path(__file__).resolve().parents[2]
DIVERGED = REPO / "tests" / "fixtures" / "round1" / "diverged" / "run-lr1e6"
TINY = ["--d-model", "16", "--n-heads", "2", "--n-layers", "1", "--batch-size", "32"]


def strict_records(run: Path) -> list[dict]:
    """Every line of metrics.jsonl parsed as strict JSON (a bare NaN or Infinity fails)."""
    def refuse(constant):
        raise AssertionError(f"bare {constant} in metrics.jsonl")

    return [json.loads(line, parse_constant=refuse) for line in (run / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture
def names(tmp_path) -> Path:
    path = tmp_path / "names.txt"
    path.write_text("\n".join((REPO / "data" / "names.txt").read_text().split()[:300]) + "\n")
    return path


def tiny(names, **changes) -> TrainConfig:
    return TrainConfig(**{**dict(d_model=16, n_heads=2, n_layers=1, batch_size=32, steps=40, eval_interval=10,
                                 log_interval=5, data=str(names)), **changes})


@pytest.fixture
def poisoned_steps(monkeypatch):
    """The training steps (counted from 1) whose loss is made NaN, as a diverging run's would be."""
    bad: set[int] = set()
    real_build = trainer.build_model  # the Trainer's setup builds the model

    def build(kind, config):
        model = real_build(kind, config)
        real_forward, calls = model.forward, [0]

        def forward(idx, targets=None, **kw):
            logits, loss = real_forward(idx, targets, **kw)
            if model.training and targets is not None:
                calls[0] += 1
                if calls[0] in bad:
                    loss = loss * float("nan")
            return logits, loss

        model.forward = forward
        return model

    monkeypatch.setattr(trainer, "build_model", build)
    return bad


def test_a_learning_rate_of_1e6_is_refused_and_a_diverging_run_fails_with_the_reason(poisoned_steps):
    refused = one_error_line(CliRunner().invoke(main, ["train", *TINY, "--lr", "1e6", "--steps", "40"]))
    assert "--lr" in refused and "(0, 10]" in refused  # past the option's bound: nothing starts
    poisoned_steps.update(range(1, 1000))  # within the bounds, a run whose loss is not a number from the start
    run = paths.runs_dir() / "hot"
    line = one_error_line(CliRunner().invoke(main, ["train", *TINY, "--steps", "40", "--eval-interval",
                                                    "10", "--out", str(run), "--quiet"]))
    assert "training diverged" in line and "lower --lr" in line
    info = listing.read_run(run)
    assert info.status == "failed" and "diverged" in info.reason and info.best_val is None
    strict_records(run)
    assert not (run / "checkpoint").exists()  # nothing was ever worth keeping
    listed = CliRunner().invoke(main, ["runs"]).output
    assert "failed" in listed and "training diverged" in listed
    assert "saved no checkpoint" in one_error_line(CliRunner().invoke(main, ["sample", "--checkpoint", "hot"]))


def test_a_nan_after_a_good_evaluation_keeps_the_good_checkpoint(tmp_path, names, poisoned_steps):
    poisoned_steps.add(15)
    run = tmp_path / "run"
    with pytest.raises(TrainingDiverged, match="loss became nan at step 15"):
        loop.train(tiny(names), run)
    info = listing.read_run(run)
    assert info.status == "failed" and "step 15" in info.reason
    best = load_checkpoint(run / "checkpoint")
    assert best.state["step"] == 10 and all(torch.isfinite(p).all() for p in best.model.parameters())
    assert max(r.get("step", 0) for r in strict_records(run)) <= 15
    sampled = CliRunner().invoke(main, ["sample", "--checkpoint", str(run), "-n", "3", "--json"])
    assert sampled.exit_code == 0 and len(json.loads(sampled.output)) == 3


def test_skip_mode_skips_a_bad_batch_and_finishes(tmp_path, names, poisoned_steps):
    poisoned_steps.update({5, 6})
    run = tmp_path / "run"
    status = loop.train(tiny(names, nonfinite="skip"), run)
    assert status["state"] == "finished" and math.isfinite(status["val_loss"])
    records = strict_records(run)[1:]
    assert records[-1]["skipped_steps"] == 2 and "skipped_steps" not in records[0]
    assert all(math.isfinite(r["train_loss"]) for r in records if "train_loss" in r)


def test_skip_mode_still_fails_when_every_batch_is_bad(tmp_path, names, poisoned_steps):
    poisoned_steps.update(range(1, 100))
    with pytest.raises(TrainingDiverged, match="21 steps in a row"):
        loop.train(tiny(names, nonfinite="skip"), tmp_path / "run")


def test_a_bigram_without_smoothing_fails_with_the_reason(tmp_path, names):
    with pytest.raises(TrainingDiverged, match="smoothing"):
        loop.train(TrainConfig(model="bigram", smoothing=0.0, data=str(names)), tmp_path / "b")
    assert listing.read_run(tmp_path / "b").status == "failed"


def test_nonfinite_must_be_fail_or_skip():
    from minigpt.errors import ConfigError

    with pytest.raises(ConfigError, match="on NaN must be one of fail, skip"):
        TrainConfig(nonfinite="ignore")


def test_round1_diverged_run_reads_as_failed_and_its_checkpoint_is_refused():
    root = paths.runs_dir()
    shutil.copytree(DIVERGED, root / DIVERGED.name)
    info = listing.read_run(root / DIVERGED.name)
    assert info.status == "failed" and "diverged" in info.reason and info.best_val is None
    records, _ = read_metrics(root / DIVERGED.name)
    assert [r["step"] for r in records] == [1, 10, 20] and "train_loss" not in records[1]
    for command in ("sample", "eval"):
        line = one_error_line(CliRunner().invoke(main, [command, "--checkpoint", DIVERGED.name]))
        assert "NaN or infinite weights" in line


async def test_the_playground_says_a_nan_checkpoint_cannot_be_used(tmp_path, make_app):
    from tui.playground.playground import PlaygroundScreen

    shutil.copytree(DIVERGED / "checkpoint", tmp_path / "checkpoints" / "default")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(PlaygroundScreen(checkpoints_dir=tmp_path / "checkpoints", runs_root=tmp_path / "no-runs"))
        for _ in range(3):
            await pilot.pause()
            await app.workers.wait_for_complete()
        assert isinstance(app.screen, PlaygroundScreen) and app.screen.batch is None
        message = str(app.screen.query_one("#pg-message").render())
        assert "Cannot load" in message and "NaN or infinite weights" in message
