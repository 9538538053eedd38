"""What a desired retention costs: reviews a day, simulated with the learner's own scheduler.

A higher desired retention means shorter intervals, so more reviews for the same cards. The
simulation starts from the progress database as it is (each card's fsrs state; new cards come in
at the learner's new-cards-a-day limit) and runs ``DAYS`` days, one sitting a day, recalling each
due card with the probability fsrs predicts (a seeded draw, so the figure is the same each time):
a recalled card is answered Good, a forgotten one Again and then Good at its relearning step.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from fsrs import Card, Rating, State

from minigpt.store import Store
from minigpt.study import rows
from minigpt.study import scheduler as sch
from minigpt.study.cards import Deck
from minigpt.study.flags import left_out

DAYS = 30
CHOICES = (0.80, 0.85, 0.90, 0.95)


@dataclass(frozen=True)
class Workload:
    retention: float
    reviews_per_day: float   # cards shown a day on average over the simulated days (new ones included)
    days: int


def simulate(store: Store, deck: Deck, retention: float, *, new_per_day: int, days: int = DAYS,
             now: datetime | None = None, seed: int = 0) -> Workload:
    now = sch.as_utc(now)
    scheduler = sch.make_scheduler(retention, sch.fitted_parameters(store))
    rng = random.Random(seed)
    states, unreadable = rows.card_states(store)
    out_of_play = left_out(store)  # flagged or suspended: not studied, so no workload
    cards: list[Card] = []
    new = 0
    for c in deck:
        row = states.get(c.id)
        if c.id in unreadable or c.id in out_of_play:
            continue
        if row is None or row["reps"] == 0:
            new += 1
        else:
            cards.append(sch.card_from_json(row["fsrs_json"]))
    shown = 0
    for day in range(days):
        t = now + timedelta(days=day)
        take = min(new, max(0, new_per_day))
        new -= take
        cards += [Card(due=t) for _ in range(take)]
        for i, card in enumerate(cards):
            if card.due > t + timedelta(hours=12):
                continue
            shown += 1
            recall = card.state == State.Learning or rng.random() < scheduler.get_card_retrievability(card, t)
            card, _ = scheduler.review_card(card, Rating.Good if recall else Rating.Again, t)
            while card.state != State.Review:  # learning steps, the same day
                card, _ = scheduler.review_card(card, Rating.Good, card.due)
            cards[i] = card
    return Workload(retention, shown / days, days)


def workloads(store: Store, deck: Deck, *, new_per_day: int, choices: tuple[float, ...] = CHOICES,
              now: datetime | None = None) -> list[Workload]:
    """The workload at each desired retention of ``choices`` (the same draws for each)."""
    return [simulate(store, deck, r, new_per_day=new_per_day, now=now) for r in choices]
