"""Two windows of the tutor on one progress file: undo in one must not erase a bury (or a
suspension) made in the other since the answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from minigpt.store import Store
from minigpt.study.decks import load_decks
from minigpt.study.review import StudySession

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def deck():
    return load_decks()


def _windows(tmp_path, deck):
    path = tmp_path / "progress.sqlite3"
    return StudySession(Store(path), deck), StudySession(Store(path), deck)


def test_undo_keeps_a_bury_made_in_another_window(tmp_path, deck):
    """The sweep's reproduction: answer in A, bury in B, undo in A."""
    a, b = _windows(tmp_path, deck)
    a.rate("term.query", 3, now=T0)
    until = b.bury("term.query", now=T0 + timedelta(minutes=1))
    assert a.undo() == "term.query"
    status = b.status("term.query")
    assert status.buried_until == until
    assert "term.query" not in a.queue(now=T0 + timedelta(minutes=2))


def test_undo_of_a_reviewed_card_keeps_bury_and_suspension_from_elsewhere(tmp_path, deck):
    """Not tried by the sweep: a card with a review history (undo restores a previous state, not
    'new'), then both a bury and a suspension from the other window."""
    a, b = _windows(tmp_path, deck)
    a.rate("term.key", 3, now=T0)
    a.rate("term.key", 3, now=T0 + timedelta(days=3))
    until = b.bury("term.key", now=T0 + timedelta(days=3, minutes=1))
    b.suspend("term.key", now=T0 + timedelta(days=3, minutes=2))
    assert a.undo() == "term.key"
    status = a.status("term.key")
    assert status.reps == 1 and status.suspended and status.buried_until == until


def test_a_bury_before_the_answer_comes_back_with_the_undo(tmp_path, deck):
    """An answer clears a bury; undoing it brings the earlier bury back (the state before)."""
    a, _ = _windows(tmp_path, deck)
    a.rate("term.value", 3, now=T0 - timedelta(days=5))
    until = a.bury("term.value", now=T0)
    a.rate("term.value", 3, now=T0 + timedelta(minutes=1))
    assert a.status("term.value").buried_until is None
    assert a.undo() == "term.value"
    assert a.status("term.value").buried_until == until
