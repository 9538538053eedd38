"""Shared fixtures: every test gets its own user-data folder, never the learner's real one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

REPO = Path(__file__).resolve().parents[1]
CANONICAL_NAMES = REPO.parent / "shared" / "data" / "names.txt"

# Hypothesis: a few dozen examples per property in the default tier; the soak tier (`make soak`,
# which passes --hypothesis-profile=soak) tries many more. No test sets its own max_examples,
# which would override both.
settings.register_profile("tier-default", max_examples=50, deadline=None)
settings.register_profile("soak", max_examples=600, deadline=None)


@pytest.fixture(autouse=True, scope="session")
def shared_example_cache(tmp_path_factory):
    """One worked-example cache for the session (never the learner's): an example computed for one
    test is shown from the cache in the next, as it would be on a second launch. Entries are keyed
    by the code, so sharing cannot show a stale one; a test about the cache sets its own folder."""
    os.environ["MINIGPT_CACHE_DIR"] = str(tmp_path_factory.mktemp("example-cache"))
    yield
    os.environ.pop("MINIGPT_CACHE_DIR", None)


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


@pytest.fixture(params=[pytest.param(False, id="quiet"),
                        pytest.param(True, id="every-core-busy", marks=pytest.mark.soak)])
def busy_in_soak(request):
    """A race check run twice: on a quiet worker in the default tier, and again with every core
    busy (``cpu_load``) in the soak tier. The spinners take both cores from the other workers for
    the test's whole length, so the default tier keeps the quiet run and CI runs both tiers."""
    if request.param:
        request.getfixturevalue("cpu_load")
    return request.param


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
    """A bigram, an MLP and a tiny MiniGPT fitted a little (tests/helpers/playground_models.py's
    make_checkpoints), built once per session and only read by the tests that use them."""
    from tests.helpers.playground_models import make_checkpoints

    return make_checkpoints(tmp_path_factory.mktemp("playground-checkpoints"))


@pytest.fixture
def canonical_names() -> Path:
    if not CANONICAL_NAMES.exists():
        pytest.skip(f"the canonical course dataset is not at {CANONICAL_NAMES}")
    return CANONICAL_NAMES


def pytest_configure(config):
    settings.load_profile(config.getoption("hypothesis_profile", None) or "tier-default")
    # Quiet, deterministic torch on the 2-core CI machines.
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    # MINIGPT_TEST_THREADS=N runs torch on N threads (issue 56: a float result that changes with
    # the thread count must be compared with a tolerance, so the suite is also run at 1 and 2).
    # OMP_NUM_THREADS carries it to subprocesses; torch is imported only when the variable is set.
    threads = os.environ.get("MINIGPT_TEST_THREADS")
    if threads:
        os.environ["OMP_NUM_THREADS"] = threads
        import torch

        torch.set_num_threads(int(threads))


class FakeTrainer:
    """What the ``fake_trainer`` fixture returns: the knobs of ``tests/helpers/minigpt_fake_trainer.py``."""

    argv = [sys.executable, "-m", "tests.helpers.minigpt_fake_trainer"]  # then "train", its flags

    def __init__(self, monkeypatch):
        self._monkeypatch = monkeypatch

    def step_s(self, seconds: float) -> None:
        """Seconds each step of the workers started from now on takes."""
        self._monkeypatch.setenv("MINIGPT_FAKE_STEP_S", str(seconds))

    def fail_at(self, step: int) -> None:
        """Workers started from now on crash at this step (a traceback, a failed status)."""
        self._monkeypatch.setenv("MINIGPT_FAKE_FAIL_AT", str(step))


@pytest.fixture
def fake_trainer(monkeypatch) -> FakeTrainer:
    """Every trainer the app or a scheduler launches (``workers.trainer_argv``, read from the
    environment, so a scheduler subprocess inherits it) is the torch-free fake: where the trainer
    is not what a test checks, a run costs a fraction of a second instead of torch's import and
    training. Tests that sample from a checkpoint or check the training itself use the real one."""
    monkeypatch.setenv("MINIGPT_TRAINER", "tests.helpers.minigpt_fake_trainer")
    monkeypatch.setenv("MINIGPT_FAKE_STEP_S", "0.01")
    monkeypatch.delenv("MINIGPT_FAKE_FAIL_AT", raising=False)
    return FakeTrainer(monkeypatch)
