"""Shared fixtures: every test gets its own user-data folder, never the learner's real one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CANONICAL_NAMES = REPO.parent / "shared" / "data" / "names.txt"


@pytest.fixture(autouse=True)
def isolated_data_dir(tmp_path, monkeypatch) -> Path:
    data = tmp_path / "user-data"
    monkeypatch.setenv("MINIGPT_DATA_DIR", str(data))
    return data


@pytest.fixture
def make_app(tmp_path):
    """The app for a Pilot test, on a progress database of its own (one definition for every test)."""
    from minigpt.store import Store
    from tui.app import TutorApp

    def build(**kwargs):
        kwargs.setdefault("store", Store(tmp_path / "progress.sqlite3"))
        return TutorApp(**kwargs)

    return build


@pytest.fixture
def app(make_app):
    return make_app()


@pytest.fixture
def canonical_names() -> Path:
    if not CANONICAL_NAMES.exists():
        pytest.skip(f"the canonical course dataset is not at {CANONICAL_NAMES}")
    return CANONICAL_NAMES


def pytest_configure(config):
    # Quiet, deterministic torch on the 2-core CI machines.
    os.environ.setdefault("OMP_NUM_THREADS", "2")
