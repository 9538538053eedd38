"""Soak tier: real short runs made to show a symptom, diagnosed from their own run folders (the
default tier reads recorded ones in tests/test_diagnosis.py): ten names learnt by heart overfit,
an extreme learning rate diverges, a tiny one leaves the attention heads averaging evenly, and a
short run of the default recipe shows nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from minigpt import paths
from minigpt.errors import TrainingDiverged
from minigpt.training.diagnosis import diagnose
from minigpt.training.loop import train
from minigpt.training.options import TrainConfig

pytestmark = pytest.mark.soak


def names_file(tmp_path: Path, n: int) -> str:
    path = tmp_path / f"{n}-names.txt"
    path.write_text("\n".join(Path(paths.default_dataset()).read_text().split()[:n]) + "\n")
    return str(path)


def test_ten_names_overfit_and_point_to_the_training_lesson(tmp_path):
    cfg = TrainConfig(data=names_file(tmp_path, 10), steps=400, eval_interval=25, batch_size=32, device="cpu")
    train(cfg, tmp_path / "ten")
    symptoms = {s.id: s for s in diagnose(tmp_path / "ten")}
    assert "overfitting" in symptoms, [s.line() for s in symptoms.values()]
    assert symptoms["overfitting"].lesson == "training"
    assert "slow" not in symptoms  # train far below the bigram: not a learning rate too low


def test_an_extreme_learning_rate_diverges(tmp_path):
    cfg = TrainConfig(data=names_file(tmp_path, 300), steps=60, eval_interval=20, batch_size=32, lr=10.0,
                      optimizer="adamw", grad_clip=None, warmup=0.0, device="cpu")
    try:
        train(cfg, tmp_path / "hot")
    except TrainingDiverged:
        pass  # the trainer stops a run whose loss is no longer a number: its folder says why
    [symptom] = diagnose(tmp_path / "hot")
    assert (symptom.id, symptom.lesson) == ("diverged", "training"), symptom.line()


def test_a_tiny_learning_rate_leaves_the_heads_averaging_evenly(tmp_path):
    """Adam at 1e-6 barely moves the queries and keys from their initialisation (the default optimizer
    at 1e-6 or 1e-5 already parted the heads by step 200): the heads still average the past, and
    the loss stays flat."""
    cfg = TrainConfig(data=names_file(tmp_path, 300), steps=200, eval_interval=25, lr=1e-6, optimizer="adamw",
                      device="cpu")
    train(cfg, tmp_path / "cold")
    symptoms = {s.id: s for s in diagnose(tmp_path / "cold")}
    assert "heads_uniform" in symptoms, [s.line() for s in symptoms.values()]
    assert symptoms["heads_uniform"].lesson == "averaging-the-past"
    assert symptoms["heads_uniform"].evidence.startswith("16 of 16 heads")


def test_a_short_run_of_the_default_recipe_shows_nothing(tmp_path):
    train(TrainConfig(steps=600, device="cpu"), tmp_path / "default")
    assert diagnose(tmp_path / "default") == []
