"""Readiness over a simulated learner: a real progress database, answers logged at chosen times.

Readiness must predict the interview day: cramming an unread lesson's flashcards is not
readiness, evidence that lasts (reviews spaced over days, a chapter quiz, a mock interview, katas
passed after reading) raises it, and an interview day further from the last review lowers it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from minigpt.katas.catalogue import kata_by_name
from minigpt.katas.history import lesson_katas
from minigpt.store import Store
from minigpt.study import readiness, scheduler
from minigpt.study.plan import set_plan

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
LESSONS = [("a", "Lesson A"), ("b", "Lesson B")]
CARDS = {"a": [f"a{i}" for i in range(5)], "b": [f"b{i}" for i in range(5)]}


def _read(store: Store, lesson: str, when: datetime) -> None:
    with store.transaction() as conn:
        conn.execute("INSERT INTO lesson_progress(lesson_id, position, read_at, updated_at) VALUES (?, 1.0, ?, ?)",
                     (lesson, scheduler.iso(when), scheduler.iso(when)))


def _answer(store: Store, card_id: str, when: datetime, rating: int = 3, mode: str = "review") -> None:
    """One answer as a study session logs it: the fsrs state moved, the log row written."""
    row = store.conn.execute("SELECT fsrs_json, reps FROM card_state WHERE card_id = ?", (card_id,)).fetchone()
    card = scheduler.card_from_json(row["fsrs_json"]) if row else scheduler.new_card(card_id, when)
    card = scheduler.review(scheduler.learner_scheduler(store), card, rating, when)
    with store.transaction() as conn:
        conn.execute("INSERT INTO card_state(card_id, fsrs_json, due, fsrs_state, reps, updated_at) "
                     "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(card_id) DO UPDATE SET fsrs_json = excluded.fsrs_json, "
                     "due = excluded.due, fsrs_state = excluded.fsrs_state, reps = excluded.reps, "
                     "updated_at = excluded.updated_at",
                     (card_id, scheduler.card_to_json(card), scheduler.iso(card.due), int(card.state),
                      (row["reps"] if row else 0) + 1, scheduler.iso(when)))
        conn.execute("INSERT INTO review_log(card_id, rating, mode, reviewed_at) VALUES (?, ?, ?, ?)",
                     (card_id, rating, mode, scheduler.iso(when)))


def _ten_minutes(store: Store, lesson: str, start: datetime) -> None:
    """Each card of the lesson Good, then Good again at its ten-minute learning step."""
    for i, card_id in enumerate(CARDS[lesson]):
        _answer(store, card_id, start + timedelta(minutes=i))
        _answer(store, card_id, start + timedelta(minutes=10 + i))


def _figures(store: Store, now: datetime, katas: dict | None = None) -> dict[str, readiness.LessonReadiness]:
    return {x.lesson: x for x in readiness.readiness(store, LESSONS, CARDS, katas or {}, now=now).lessons}


def test_ten_minutes_on_an_unread_lessons_cards_stay_below_a_read_lesson(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    _read(store, "a", T0 - timedelta(hours=1))
    _ten_minutes(store, "b", T0)  # b never read, its cards studied
    r = _figures(store, T0 + timedelta(minutes=20))
    assert r["b"].parts["recall"] > 0 == r["a"].parts["recall"]
    assert r["b"].figure < r["a"].figure  # even a read lesson whose cards were never studied
    _ten_minutes(store, "a", T0 + timedelta(minutes=30))  # now the same recall
    r = _figures(store, T0 + timedelta(minutes=50))
    assert r["a"].parts["recall"] == pytest.approx(r["b"].parts["recall"], abs=0.01)
    assert r["b"].figure < r["a"].figure
    assert readiness.Readiness(list(r.values())).weakest(1)[0].lesson == "b"


def test_recall_is_judged_a_week_ahead_not_now(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    _read(store, "a", T0)
    _ten_minutes(store, "a", T0)
    now = T0 + timedelta(minutes=20)
    recall = _figures(store, now)["a"].parts["recall"]
    today = readiness.readiness(store, LESSONS, CARDS, {}, now=now, on=now).lessons[0].parts["recall"]
    assert today > 0.99 and recall < 0.9  # seen a minute ago is not known in a week
    assert readiness.judged_at(store, now) == now + timedelta(days=readiness.HORIZON_DAYS)


def test_spaced_reviews_raise_readiness_above_one_cramming_session(tmp_path):
    crammed, spaced = Store(tmp_path / "c.sqlite3"), Store(tmp_path / "s.sqlite3")
    for store in (crammed, spaced):
        _read(store, "a", T0)
        _ten_minutes(store, "a", T0)
    for days in (1, 3, 7):  # the same cards again, days apart
        for card_id in CARDS["a"]:
            _answer(spaced, card_id, T0 + timedelta(days=days))
    now = T0 + timedelta(days=8)
    assert _figures(spaced, now)["a"].figure > _figures(crammed, now)["a"].figure


@pytest.mark.parametrize("mode", ["quiz:chapter", "interview"])
def test_a_chapter_quiz_or_a_mock_interview_counts_as_evidence(tmp_path, mode):
    store = Store(tmp_path / "p.sqlite3")
    _read(store, "a", T0)
    _ten_minutes(store, "a", T0)
    before = _figures(store, T0 + timedelta(days=1))["a"]
    for i, card_id in enumerate(CARDS["a"][:3]):  # two of three right
        _answer(store, card_id, T0 + timedelta(days=1, minutes=i), rating=3 if i else 1, mode=mode)
    after = _figures(store, T0 + timedelta(days=1, minutes=5))["a"]
    assert (before.parts["quiz"], after.parts["quiz"]) == (0.0, pytest.approx(2 / 3))
    assert after.figure > before.figure


def test_only_katas_passed_after_reading_count(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    kata = kata_by_name("attention")
    lesson = kata.lessons[0]

    def attempt(when: datetime) -> None:
        with store.transaction() as conn:
            conn.execute("INSERT INTO kata_progress(kata, opened_at, updated_at, passes) VALUES (?, ?, ?, 1) "
                         "ON CONFLICT(kata) DO NOTHING", (kata.name, scheduler.iso(when), scheduler.iso(when)))
            conn.execute("INSERT INTO kata_attempts(kata, attempted_at, passed, cases_failed, cases_total, source) "
                         "VALUES (?, ?, 1, 0, 7, 'app')", (kata.name, scheduler.iso(when)))

    attempt(T0)
    assert lesson_katas(store, [kata]) == {x: (0, 1) for x in kata.lessons}  # no lesson read yet
    _read(store, lesson, T0 + timedelta(hours=1))
    assert lesson_katas(store, [kata])[lesson] == (0, 1)  # passed before reading it
    assert lesson_katas(store, [kata], after_reading=False)[lesson] == (1, 1)
    attempt(T0 + timedelta(hours=2))
    credit = lesson_katas(store, [kata])
    assert credit[lesson] == (1, 1)
    assert all(credit[x] == (0, 1) for x in kata.lessons if x != lesson)  # the others are unread
    lessons, cards = [(lesson, "L")], {lesson: []}
    without = readiness.readiness(store, lessons, cards, {lesson: (0, 1)}, now=T0).lessons[0].figure
    assert readiness.readiness(store, lessons, cards, credit, now=T0).lessons[0].figure > without


def test_readiness_falls_as_the_interview_day_moves_away(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    _read(store, "a", T0)
    _ten_minutes(store, "a", T0)
    now = T0 + timedelta(hours=1)
    figures = []
    for days in (2, 10, 30):
        set_plan(store, (now + timedelta(days=days)).date())
        figures.append(_figures(store, now)["a"])
    assert figures[0].parts["recall"] > figures[1].parts["recall"] > figures[2].parts["recall"]
    assert figures[0].figure > figures[1].figure > figures[2].figure
