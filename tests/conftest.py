"""Shared fixtures: every test gets its own user-data folder, never the learner's real one."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CANONICAL_NAMES = REPO.parent / "shared" / "data" / "names.txt"

# The files that hold the suite's longest tests, longest first (their slowest tests took 30-120 s
# each on two xdist workers, 1 December 2026). `make test` hands whole files to its two workers in
# collection order (--dist loadfile --no-loadscope-reorder): starting with these leaves the short
# files for the end, so one worker does not sit idle while the other finishes a long file. The
# other files follow in pytest-xdist's own order (the most tests first). Refresh the list from a
# run's --durations when it changes.
LONG_FILES = (
    "tests/test_distributed.py",
    "tests/test_experiments_scheduler.py",
    "tests/test_tui_shell.py",
    "tests/test_tui_training.py",
    "tests/hostile/test_checkpoints.py",
    "tests/test_tui_experiments.py",
    "tests/test_tui_attention.py",
)


def pytest_collection_modifyitems(config, items):
    files = [item.nodeid.split("::")[0] for item in items]
    tests_in = Counter(files)
    rank = {item: LONG_FILES.index(f) if f in LONG_FILES else len(LONG_FILES) for item, f in zip(items, files)}
    order = {item: (rank[item], -tests_in[f], f) for item, f in zip(items, files)}
    items.sort(key=order.__getitem__)  # stable: the tests of a file keep their order


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

    def build(app_class=TutorApp, **kwargs):
        kwargs.setdefault("store", Store(tmp_path / "progress.sqlite3"))
        return app_class(**kwargs)

    return build


@pytest.fixture
def app(make_app):
    return make_app()


LOAD_LIMIT_S = 600  # a busy loop ends by itself after this, even if its test never tears down
_SPIN = "import time\nend = time.monotonic() + {limit}\nwhile time.monotonic() < end:\n    pass\n"


@pytest.fixture
def cpu_load():
    """Every core kept busy for the duration of the test, as on a learner's laptop that is never
    idle: one spinning process per core, killed at teardown (and bounded by ``LOAD_LIMIT_S``).
    Races that only show under load show here; tests using it wait on conditions, not times."""
    spinners = [subprocess.Popen([sys.executable, "-c", _SPIN.format(limit=LOAD_LIMIT_S)],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
                for _ in range(os.cpu_count() or 1)]
    try:
        yield len(spinners)
    finally:
        for proc in spinners:
            proc.kill()
        for proc in spinners:
            proc.wait()


@pytest.fixture
def names(tmp_path) -> Path:
    """The first 300 names of the course's names.txt: enough to train a tiny model on, quickly."""
    path = tmp_path / "names.txt"
    path.write_text("\n".join((REPO / "data" / "names.txt").read_text().split()[:300]) + "\n")
    return path


@pytest.fixture
def made_up_names(tmp_path) -> Path:
    """240 made-up three-letter names (no file needed): a small, regular language."""
    path = tmp_path / "names.txt"
    path.write_text("\n".join(f"{a}{b}{c}" for a in "abcdefgh" for b in "aeiou" for c in "lmnrst") + "\n")
    return path


@pytest.fixture(scope="session")
def playground_checkpoints(tmp_path_factory) -> dict[str, Path]:
    """A bigram, an MLP and a tiny MiniGPT fitted a little (tests/test_playground.py's
    make_checkpoints), built once per session and only read by the tests that use them."""
    from tests.test_playground import make_checkpoints

    return make_checkpoints(tmp_path_factory.mktemp("playground-checkpoints"))


@pytest.fixture
def canonical_names() -> Path:
    if not CANONICAL_NAMES.exists():
        pytest.skip(f"the canonical course dataset is not at {CANONICAL_NAMES}")
    return CANONICAL_NAMES


def pytest_configure(config):
    # Quiet, deterministic torch on the 2-core CI machines.
    os.environ.setdefault("OMP_NUM_THREADS", "2")
