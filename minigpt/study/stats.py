"""Numbers for the study dashboard, read from the progress database. Days are the learner's local
days (``minigpt.study.days``; ``tz=None`` is this machine's zone), like the study session's."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

from minigpt.errors import BadRowError
from minigpt.store import Store
from minigpt.study import rows, scheduler
from minigpt.study.days import local_date, start_of_local_day
from minigpt.study.flags import left_out
from minigpt.study.review import LEECH_LAPSES


def due_forecast(store: Store, days: int = 14, now: datetime | None = None,
                 tz: tzinfo | None = None) -> list[tuple[date, int]]:
    """Reviews of cards already studied falling due on each of the next ``days`` local days (new
    cards are not forecast; cards left out, flagged or suspended, neither); overdue ones count for
    today."""
    today = local_date(now, tz)
    out = [[today + timedelta(days=i), 0] for i in range(days)]
    found = store.conn.execute(
        "SELECT card_id, due FROM card_state WHERE reps > 0 AND due < ?",
        (scheduler.iso(scheduler.as_utc(now) + timedelta(days=days + 1)),))
    out_of_play = left_out(store)
    for card_id, due in found:
        if card_id in out_of_play:
            continue
        try:
            i = max(0, (local_date(scheduler.from_iso(due), tz) - today).days)
        except BadRowError:
            rows.skip(store, "card_state", card_id)
            continue
        if i < days:
            out[i][1] += 1
    return [(d, n) for d, n in out]


@dataclass(frozen=True)
class Activity:
    per_day: dict[date, int]      # reviews (all modes) per local day, only days with reviews
    streak: int                   # consecutive days up to today (or yesterday) with a review
    longest_streak: int


def reviews_per_day(store: Store, days: int = 365, now: datetime | None = None,
                    tz: tzinfo | None = None) -> Activity:
    now = scheduler.as_utc(now)
    since = start_of_local_day(now, tz) - timedelta(days=days)
    per_day: dict[date, int] = {}
    for review in rows.reviews(store, "reviewed_at >= ?", (scheduler.iso(since),)):
        d = local_date(review.reviewed_at, tz)
        per_day[d] = per_day.get(d, 0) + 1
    first = local_date(now, tz) - timedelta(days=days - 1)
    per_day = {d: n for d, n in sorted(per_day.items()) if d >= first}
    today = local_date(now, tz)
    day = today if today in per_day else today - timedelta(days=1)
    streak = 0
    while day in per_day:
        streak += 1
        day -= timedelta(days=1)
    longest = run = 0
    prev = None
    for d in sorted(per_day):
        run = run + 1 if prev is not None and d - prev == timedelta(days=1) else 1
        longest, prev = max(longest, run), d
    return Activity(per_day, streak, longest)


MIN_REVIEWS_TO_JUDGE = 50  # below this, true retention swings by ±7 points on chance alone (binomial, p = 0.9)


@dataclass(frozen=True)
class Retention:
    true_retention: float | None  # share of non-new reviews not rated Again (None: no data)
    desired: float
    reviews: int                  # how many reviews the share is over

    @property
    def reviews_to_judge(self) -> int:
        """How many more reviews before true retention says anything about the desired one."""
        return max(0, MIN_REVIEWS_TO_JUDGE - self.reviews)


def retention(store: Store, *, days: int | None = None, now: datetime | None = None,
              desired: float = scheduler.DESIRED_RETENTION) -> Retention:
    """True retention over scheduled reviews of cards that were no longer new (cram excluded)."""
    sql = ("SELECT COUNT(*), SUM(rating > 1) FROM review_log "
           "WHERE was_new = 0 AND mode != 'cram'")
    args: tuple = ()
    if days is not None:
        sql += " AND reviewed_at >= ?"
        args = (scheduler.iso(scheduler.as_utc(now) - timedelta(days=days)),)
    n, ok = store.conn.execute(sql, args).fetchone()
    return Retention((ok / n) if n else None, desired, n)


def weakest_cards(store: Store, n: int = 10) -> list[tuple[str, int, bool]]:
    """(card id, lapses, is leech) for the cards forgotten most often."""
    found = store.conn.execute(
        "SELECT card_id, lapses FROM card_state WHERE typeof(lapses) = 'integer' AND lapses > 0 "
        "ORDER BY lapses DESC, card_id LIMIT ?", (n,))
    return [(r[0], r[1], r[1] >= LEECH_LAPSES) for r in found]


def button_breakdown(store: Store, *, mode: str | None = None) -> dict[int, int]:
    """How often each answer button 1-4 was pressed."""
    out = {1: 0, 2: 0, 3: 0, 4: 0}
    sql = "SELECT rating, COUNT(*) FROM review_log"
    args: tuple = ()
    if mode:
        sql, args = sql + " WHERE mode = ?", (mode,)
    for r, c in store.conn.execute(sql + " GROUP BY rating", args):
        if r in out:  # (a rating outside 1-4 is not one the tutor wrote)
            out[r] = c
    return out
