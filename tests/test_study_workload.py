"""Desired retention as a setting, and what it costs (minigpt.study.workload)."""

import pytest

from minigpt import settings
from minigpt.errors import StudySettingError
from minigpt.store import Store
from minigpt.study import scheduler
from minigpt.study.decks import load_decks
from minigpt.study.workload import simulate


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "p.sqlite3")
    yield s
    s.close()


def test_a_higher_desired_retention_costs_more_reviews_a_day(store):
    deck = load_decks()
    low, high = (simulate(store, deck, r, new_per_day=20, days=20) for r in (0.8, 0.95))
    assert 20 <= low.reviews_per_day < high.reviews_per_day     # the new cards alone are 20 a day
    assert simulate(store, deck, 0.8, new_per_day=20, days=20) == low   # seeded: the same figure each time


def test_desired_retention_setting_in_range_or_the_default(store):
    assert scheduler.desired_retention(store) == scheduler.DESIRED_RETENTION
    scheduler.set_desired_retention(store, 0.85)
    assert scheduler.desired_retention(store) == 0.85 and scheduler.learner_scheduler(store).desired_retention == 0.85
    with pytest.raises(StudySettingError, match="between 70% and 97%"):
        scheduler.set_desired_retention(store, 0.99)
    store.set_setting(settings.DESIRED_RETENTION.key, "lots")           # a hand-edited value is not trusted
    assert scheduler.desired_retention(store) == scheduler.DESIRED_RETENTION
    store.set_setting(settings.FSRS_PARAMETERS.key, "[1, 2, 3]")      # nor fitted parameters fsrs refuses
    assert scheduler.fitted_parameters(store) is None
