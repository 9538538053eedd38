"""One notion of a card left out (minigpt.study.flags.left_out): a flagged card, until its flag is
resolved, is asked and counted nowhere — study queue, cram, chapter quiz, format quizzes and their
generative draws, mock interviews, readiness and the plan — and comes back everywhere at once."""

from __future__ import annotations

from datetime import UTC, date, datetime

from minigpt.store import Store
from minigpt.study import flags, interview, plan, quiz, readiness
from minigpt.study.decks import cached_decks
from minigpt.study.review import StudySession

NOW = datetime(2026, 3, 2, 9, tzinfo=UTC)
LESSON = "kv-cache"  # the lesson with the fewest cards: flagging all but one note is quick


def _session(tmp_path) -> StudySession:
    return StudySession(Store(tmp_path / "p.sqlite3"), cached_decks())


def _flag_all_but_one_note(session: StudySession, lesson: str) -> tuple[set[str], set[str]]:
    """Flag every card of ``lesson`` except those of its first note: (flagged, kept)."""
    cards = session.deck.by_lesson(lesson)
    kept = {c.id for c in cards if c.note_id == cards[0].note_id}
    flagged = {c.id for c in cards} - kept
    for card_id in flagged:
        flags.flag_card(session.store, card_id, "wrong")
    return flagged, kept


def test_left_out_is_open_flags_and_suspensions(tmp_path):
    session = _session(tmp_path)
    a, b = [c.id for c in session.deck.by_lesson(LESSON)][:2]
    flags.flag_card(session.store, a)
    session.suspend(b)
    assert flags.left_out(session.store) == {a, b}
    assert a not in session.deck_in_play().cards and b not in session.deck_in_play().cards
    flags.resolve_flag(session.store, a)
    session.suspend(b, False)
    assert flags.left_out(session.store) == set()
    assert len(session.deck_in_play()) == len(session.deck)


def test_a_flagged_card_is_not_crammed_nor_counted_as_due(tmp_path):
    session = _session(tmp_path)
    card = session.deck.by_lesson(LESSON)[0].id
    session.rate(card, 3, now=NOW)
    session.suspend(session.deck.by_lesson(LESSON)[1].id)
    assert card in session.cram_queue(lesson=LESSON)
    flags.flag_card(session.store, card)
    assert card not in session.cram_queue(lesson=LESSON)
    assert card not in session.queue(NOW, lesson=LESSON) and session.next_due(NOW) is None


def test_the_due_forecast_does_not_count_a_flagged_card(tmp_path):
    from datetime import timedelta

    from minigpt.study import stats

    session = _session(tmp_path)
    a, b = [c.id for c in session.deck.by_lesson(LESSON)][:2]
    for card_id in (a, b):
        session.rate(card_id, 3, now=NOW)
        session.rate(card_id, 3, now=NOW + timedelta(minutes=10))
    later = NOW + timedelta(days=30)  # both overdue by then: counted for that day
    assert stats.due_forecast(session.store, days=3, now=later)[0][1] == 2
    flags.flag_card(session.store, a)
    assert stats.due_forecast(session.store, days=3, now=later)[0][1] == 1


def test_the_chapter_quiz_asks_no_flagged_card(tmp_path):
    session = _session(tmp_path)
    flagged, kept = _flag_all_but_one_note(session, LESSON)
    for seed in range(5):
        asked = {x.card_id for x in quiz.chapter_quiz(LESSON, seed=seed, deck=session.deck_in_play())}
        assert asked and asked <= kept and not asked & flagged


def test_a_mock_interview_asks_no_flagged_card(tmp_path):
    session = _session(tmp_path)
    lesson = "training"
    asked_before = {x.card_id for x in interview.plan(session.deck_in_play(), [lesson], {}, minutes=60, seed=1)}
    for card_id in asked_before:
        flags.flag_card(session.store, card_id)
    asked = {x.card_id for x in interview.plan(session.deck_in_play(), [lesson], {}, minutes=60, seed=1)}
    assert asked_before and not asked & asked_before


def test_readiness_does_not_count_a_flagged_card(tmp_path):
    session = _session(tmp_path)
    a, b = [c.id for c in session.deck.by_lesson(LESSON)][:2]
    session.rate(a, 3, now=NOW)
    cards = {LESSON: [a, b]}

    def recall() -> float:
        return readiness.readiness(session.store, [(LESSON, "KV")], cards, {}, now=NOW).lessons[0].parts["recall"]

    both = recall()  # b was never reviewed: it counts 0
    flags.flag_card(session.store, b)
    assert recall() == 2 * both  # b is out: the mean is over a alone
    flags.flag_card(session.store, a)
    assert recall() is None  # no card left to recall


def test_the_plan_leaves_a_flagged_card_out_of_scope(tmp_path):
    session = _session(tmp_path)
    _, kept = _flag_all_but_one_note(session, LESSON)
    made = plan.make_plan(session.store, session.deck, date(2026, 3, 20), lessons=(LESSON,), now=NOW,
                              new_per_day=20, scheduler=session.scheduler, lesson_order=session.lesson_order)
    assert made.in_scope == len(kept) and set(made.retrievability) == kept


def test_the_workload_forecast_does_not_study_a_flagged_card(tmp_path):
    from minigpt.study import workload
    from minigpt.study.cards import Deck

    session = _session(tmp_path)
    deck = Deck({c.id: c for c in session.deck.by_lesson(LESSON)})
    before = workload.simulate(session.store, deck, 0.9, new_per_day=20, days=5, now=NOW)
    for card in deck:
        flags.flag_card(session.store, card.id)
    after = workload.simulate(session.store, deck, 0.9, new_per_day=20, days=5, now=NOW)
    assert before.reviews_per_day > 0 == after.reviews_per_day
