"""The hostile suite's fixtures (its shared helpers are in tests/helpers/hostile.py; the input classes in
tests/hostile/__init__.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.hostile import BROKEN_ERROR, BROKEN_RUN, EVIL_RUN, bounded, write_names

TEST_BOUND_S = 240  # no hostile test may hang the suite: each fails after this (machines are shared)


@pytest.fixture(autouse=True)
def _no_test_hangs():
    with bounded(TEST_BOUND_S):
        yield


@pytest.fixture(scope="session")
def huge_names(tmp_path_factory) -> Path:
    """A 200 MB dataset, generated once per session."""
    return write_names(tmp_path_factory.mktemp("huge") / "names-200mb.txt", 200_000_000)


@pytest.fixture(scope="session")
def evil_runs(tmp_path_factory) -> Path:
    """A runs folder: a bigram trained on escape sequences (counting: ~1 s) and a failed run."""
    from minigpt.training.loop import train
    from minigpt.training.options import TrainConfig

    root = tmp_path_factory.mktemp("evil")
    data = root / "evil.txt"
    # Distinct characters in each line keep the bigram's walks close to the lines themselves.
    lines = ["\x1b]0;PWN\x07", "\x1b]52;c;Qm9v\x07", "\x9b2J", "ab\x1b[2Jcd"] * 5
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    runs = root / "runs"
    train(TrainConfig(model="bigram", data=str(data), steps=1), runs / EVIL_RUN)
    broken = runs / BROKEN_RUN
    broken.mkdir()
    (broken / "status.json").write_text(json.dumps(
        {"state": "failed", "error": BROKEN_ERROR, "model": "gpt", "step": 3}), encoding="utf-8")
    return runs


@pytest.fixture(scope="session")
def evil_checkpoint(evil_runs) -> Path:
    return evil_runs / EVIL_RUN / "checkpoint"


@pytest.fixture
def evil_user_runs(evil_runs, isolated_data_dir) -> Path:
    """The hostile runs, copied into this test's own user-data folder."""
    target = isolated_data_dir / "runs"
    shutil.copytree(evil_runs, target)
    return target


@pytest.fixture
def quick_decks(tmp_path, monkeypatch) -> Path:
    """The bundled decks without numeric.toml, whose answers take seconds to compute: the tests
    that open flashcards need some cards, not those."""
    from minigpt.study import decks

    folder = tmp_path / "decks"
    folder.mkdir()
    for path in decks.default_decks_dir().glob("*.toml"):
        if path.name != "numeric.toml":
            shutil.copy(path, folder / path.name)
    monkeypatch.setattr(decks, "default_decks_dir", lambda: folder)
    return folder
