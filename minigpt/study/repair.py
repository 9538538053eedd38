"""Repair what an older grader did: typed answers it marked wrong that today's grader accepts.

Migration 3 of the progress database sets ``study.regrade`` to "pending". The next time the app
opens, ``regrade_pending`` re-grades every typed answer logged as Again (the log keeps the typed
text), rates the ones now accepted Good, and recomputes those cards' schedules by replaying their
answers through FSRS in order. What was repaired is kept as a one-line notice that the app shows
once (``take_notice``). Running it again does nothing: the marker is then "done".
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from minigpt import settings
from minigpt.store import Store
from minigpt.study import quiz, rows
from minigpt.study import scheduler as sch
from minigpt.study.cards import Deck
from minigpt.study.formats import QUIZ_MODES

# The review-log modes whose answers were typed: the formats that re-grade, and the chapter quiz's mix.
TYPED_MODES = tuple(m.log_mode for m in QUIZ_MODES.values() if m.regrade is not None or not m.is_format)


@dataclass
class Regrade:
    log_ids: list[int] = field(default_factory=list)
    cards: set[str] = field(default_factory=set)

    @property
    def notice(self) -> str:
        n, m = len(self.log_ids), len(self.cards)
        return (f"A grading fix: {n} typed answer{'s' * (n != 1)} once marked wrong "
                f"{'are' if n != 1 else 'is'} now right (on {m} card{'s' * (m != 1)}); "
                "those cards' schedules were recomputed.")


def accepted_now(deck: Deck, card_id: str, answer: str) -> bool:
    """Would today's grader accept this typed answer for this card?"""
    card = deck.get(card_id)
    if card is None or not answer or not answer.strip():
        return False
    rng = random.Random(0)
    for fmt in quiz.formats_for(card):
        regrade = QUIZ_MODES[fmt].regrade
        if regrade is not None:  # a format whose answers are typed
            return regrade(quiz.question_for(deck, card, rng, fmt=fmt), answer)
    return False


def _replay(store: Store, card_id: str, scheduler) -> None:
    """Recompute a card's schedule from its logged answers (cram answers never moved it; an
    answer whose row cannot be read is left out, and counted)."""
    answers = rows.reviews(store, "card_id = ? AND mode != 'cram'", (card_id,))
    if not answers:
        return
    card = sch.new_card(card_id, answers[0].reviewed_at)
    lapses = 0
    for answer in answers:
        lapses += int(sch.is_lapse(card, answer.rating))
        card = sch.review(scheduler, card, answer.rating, answer.reviewed_at)
    store.conn.execute("UPDATE card_state SET fsrs_json = ?, due = ?, fsrs_state = ?, reps = ?, "
                 "lapses = ? WHERE card_id = ?",
                 (sch.card_to_json(card), sch.iso(card.due), int(card.state), len(answers), lapses,
                  card_id))


def regrade_pending(store: Store, deck: Deck) -> Regrade | None:
    """Re-grade once after migration 3; None when there was nothing pending."""
    if store.read_only or settings.get(store, settings.REGRADE) != "pending":
        return None
    wrong = store.conn.execute(
        f"SELECT id, card_id, answer FROM review_log WHERE rating = 1 AND answer IS NOT NULL "
        f"AND mode IN ({', '.join('?' for _ in TYPED_MODES)}) ORDER BY id", TYPED_MODES).fetchall()
    result = Regrade()
    for row in wrong:
        if isinstance(row["answer"], str) and accepted_now(deck, row["card_id"], row["answer"]):
            result.log_ids.append(row["id"])
            result.cards.add(row["card_id"])
    scheduler = sch.learner_scheduler(store)  # the learner's retention and fitted parameters, as the sessions use
    with store.transaction() as conn:
        for log_id in result.log_ids:
            conn.execute("UPDATE review_log SET rating = 3 WHERE id = ?", (log_id,))
        for card_id in sorted(result.cards):
            _replay(store, card_id, scheduler)
        settings.write(conn, settings.REGRADE, "done")
        if result.log_ids:
            settings.write(conn, settings.REGRADE_NOTICE, result.notice)
    return result


def take_notice(store: Store) -> str | None:
    """The repair notice, once: reading it removes it."""
    text = settings.get(store, settings.REGRADE_NOTICE)
    if text is None or store.read_only:
        return None
    settings.clear(store, settings.REGRADE_NOTICE)
    return text
