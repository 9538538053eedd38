"""The home screen's "Cards to study" count and the per-mode quiz log values."""

from datetime import UTC, datetime, timedelta

import pytest

from minigpt.store import Store
from minigpt.study.anki import import_file
from minigpt.study.decks import load_decks
from minigpt.study.review import QUIZ_MODES, StudySession, history, queue_counts

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def test_queue_counts_matches_a_session_over_the_bundled_deck(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    session = StudySession(store, load_decks())
    assert queue_counts(store, T0) == session.counts(T0)
    session.rate(session.next_card(T0), 1, now=T0)
    later = T0 + timedelta(minutes=10)  # an Again card is due again after a few minutes
    assert queue_counts(store, later) == session.counts(later)
    assert queue_counts(store, later).learning == 1


def test_queue_counts_includes_imported_cards(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    StudySession(store, load_decks()).set_new_per_day(10_000)
    before = queue_counts(store, T0).new
    f = tmp_path / "mine.md"
    f.write_text("Q: What is d_model?\nA: The width of the residual stream.\n")
    import_file(store, f)
    assert queue_counts(store, T0).new == before + 1


@pytest.mark.parametrize("mode", QUIZ_MODES)
def test_each_quiz_mode_is_logged_by_name_and_moves_the_schedule(tmp_path, mode):
    store = Store(tmp_path / "p.sqlite3")
    session = StudySession(store, load_decks())
    card = session.next_card(T0)
    st = session.rate(card, 3, mode=mode, now=T0)
    assert st.reps == 1
    assert history(store, card)[-1]["mode"] == mode


def test_unknown_mode_is_refused(tmp_path):
    session = StudySession(Store(tmp_path / "p.sqlite3"), load_decks())
    with pytest.raises(ValueError):
        session.rate(session.next_card(T0), 3, mode="quiz:nonsense", now=T0)
