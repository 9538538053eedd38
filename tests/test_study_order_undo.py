"""Study order (lesson order, siblings apart, read lessons only) and undo that only takes back
this session's own answers, with two sessions on one real SQLite file."""

import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from minigpt.lessons import load_lessons
from minigpt.store import Store
from minigpt.study.decks import load_decks
from minigpt.study.order import new_card_order, space_siblings
from minigpt.study.review import StudySession, UndoError, history

ROOT = Path(__file__).resolve().parent.parent
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def deck():
    return load_decks()


@pytest.fixture(scope="module")
def order():
    return {lesson.id: lesson.order for lesson in load_lessons()}


def two_sessions(path, deck):
    return StudySession(Store(path), deck), StudySession(Store(path), deck)


def test_undo_takes_back_only_this_sessions_answer(tmp_path, deck):
    a, b = two_sessions(tmp_path / "p.sqlite3", deck)
    a.rate("term.query", 3, now=T0)
    b.rate("term.key", 3, now=T0 + timedelta(seconds=1))     # the newest row in the file
    assert a.undo() == "term.query"
    assert a.status("term.query").is_new
    assert b.status("term.key").reps == 1                      # the other window's answer stays
    assert [r["card_id"] for r in history(b.store)] == ["term.key"]
    assert a.undo() is None                                    # a has nothing left of its own
    assert b.undo() == "term.key"
    assert history(a.store) == []


def test_undo_refuses_when_another_session_answered_the_same_card_since(tmp_path, deck):
    a, b = two_sessions(tmp_path / "p.sqlite3", deck)
    a.rate("term.value", 3, now=T0)
    b.rate("term.value", 1, now=T0 + timedelta(minutes=5))
    with pytest.raises(UndoError, match="answered again elsewhere"):
        a.undo()
    assert [r["rating"] for r in history(a.store, "term.value")] == [3, 1]  # nothing lost
    assert a.status("term.value").reps == 2
    assert b.undo() == "term.value"       # b's own answer can go, and then a's can too
    assert a.undo() == "term.value"
    assert a.status("term.value").is_new


def test_undo_keeps_a_suspension_made_after_the_answer(tmp_path, deck):
    s = StudySession(Store(tmp_path / "p.sqlite3"), deck)
    s.rate("term.gelu", 3, now=T0)
    s.suspend("term.gelu", now=T0)
    assert s.undo() == "term.gelu"
    assert s.status("term.gelu").suspended and s.status("term.gelu").is_new


def test_undo_across_two_processes(tmp_path, deck):
    path = tmp_path / "p.sqlite3"
    mine = StudySession(Store(path), deck)
    mine.rate("term.rope", 3, now=T0)
    other = textwrap.dedent(f"""
        from datetime import datetime, timezone
        from minigpt.store import Store
        from minigpt.study.decks import load_decks
        from minigpt.study.review import StudySession
        s = StudySession(Store({str(path)!r}), load_decks())
        s.rate("term.causal-mask", 4, now=datetime(2025, 3, 1, 10, tzinfo=timezone.utc))
    """)
    subprocess.run([sys.executable, "-c", other], check=True, cwd=ROOT,
                   env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert mine.undo() == "term.rope"
    assert [r["card_id"] for r in history(mine.store)] == ["term.causal-mask"]


def test_space_siblings_keeps_notes_apart():
    note = {"a": "x", "a:r": "x", "b": "y", "b:r": "y", "c": "z"}.get
    assert space_siblings(["a", "a:r", "b", "b:r", "c"], note) == ["a", "b", "a:r", "b:r", "c"]
    assert space_siblings(["a", "a:r"], note) == ["a", "a:r"]      # nothing else to put between
    assert space_siblings(["a:r", "b"], note, after="a") == ["b", "a:r"]


def test_a_session_never_shows_siblings_back_to_back(tmp_path, deck):
    s = StudySession(Store(tmp_path / "p.sqlite3"), deck)
    s.set_new_per_day(60)
    now, prev, shown = T0, None, []
    for step in range(120):
        card = s.next_card(now, after=prev)
        if card is None:
            now += timedelta(minutes=11)
            continue
        shown.append(card)
        s.rate(card, 1 if step % 5 == 0 else 3, now=now)
        prev = card
        now += timedelta(seconds=20)
    pairs = [(x, y) for x, y in zip(shown, shown[1:]) if deck[x].note_id == deck[y].note_id]
    assert len(shown) > 80 and not pairs, pairs[:5]


def test_new_cards_follow_lesson_order(tmp_path, deck, order):
    ids = list(deck.cards)
    ordered = new_card_order(deck, ids, order)
    assert [order[deck[c].lesson] for c in ordered] == sorted(order[deck[c].lesson] for c in ids)
    s = StudySession(Store(tmp_path / "p.sqlite3"), deck)
    s.set_new_per_day(1000)
    queue = s.queue(T0)
    # Spacing siblings may swap a card with its neighbour, never more than that.
    moved = [i for i, c in enumerate(queue) if abs(ordered.index(c) - i) > 2]
    assert sorted(queue) == sorted(ordered) and not moved
    first = queue[:6]
    assert {deck[c].lesson for c in first} == {"why-transformers"}
    assert deck[first[0]].kind == "term"


def test_new_cards_only_from_lessons_read_when_asked(tmp_path, deck):
    store = Store(tmp_path / "p.sqlite3")
    s = StudySession(store, deck)
    s.set_new_from_read_lessons(True)
    assert s.queue(T0) == [] and s.counts(T0).new == 0
    store.save_lesson_position("rope", 1.0, reached_end=True)
    assert {deck[c].lesson for c in s.queue(T0)} == {"rope"}
    assert s.counts(T0).new == len(deck.by_lesson("rope"))
    s.set_new_from_read_lessons(False)
    assert s.counts(T0).new == 20
