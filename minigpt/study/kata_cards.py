"""Katas on the FSRS schedule: a passed kata comes back, to be solved again from the blank stub.

A kata becomes a card the first time it is passed (:func:`sync_passed`, which reads the katas'
progress rows, so a pass recorded by the app, the shell or an older release all count): that
first pass is rated Hard when hints were shown, else Good. When the card is due the kata is
re-solved from its stub (the saved draft is kept apart and shown afterwards) and the re-solve is
rated by :func:`rating_for`:

- Again: a check failed with one of the kata's named mistakes, or the learner gave up;
- Hard: a hint was shown, or a check failed without a named mistake before the pass;
- Good: a clean pass (every check passed, no hint);
- Easy: a clean pass in under :data:`FAST_SECONDS` (5 minutes) from opening the stub.

Each rating is one transaction that writes the new ``kata_card`` row and a ``kata_review`` row
holding the previous one, as ``minigpt.study.review`` does for deck cards. The schedule comes
from fsrs (the learner's retention and fitted parameters); this module never imports the katas
package (a sibling layer): the names come from the progress tables and the caller.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from minigpt.errors import BadRowError
from minigpt.skipped_rows import skip
from minigpt.store import Store
from minigpt.study import rows
from minigpt.study import scheduler as sch

FAST_SECONDS = 5 * 60


@dataclass(frozen=True)
class KataCard:
    kata: str
    card: sch.Card
    due: datetime
    reps: int
    lapses: int

    def is_due(self, now: datetime | None = None) -> bool:
        return self.due <= sch.as_utc(now)

    def retrievability(self, scheduler: sch.Scheduler, now: datetime | None = None) -> float:
        """FSRS's probability of solving it again now (what readiness should credit)."""
        return scheduler.get_card_retrievability(self.card, sch.as_utc(now))


def rating_for(*, passed: bool, named_mistake: bool, hints: int, failed_checks: int = 0,
               seconds: float | None = None) -> tuple[int, str]:
    """The rating of one re-solve and the reason, by the rule in the module's docstring."""
    if named_mistake or not passed:
        return 1, "named mistake" if named_mistake else "not solved"
    if hints:
        return 2, "hint shown"
    if failed_checks:
        return 2, "failed a check first"
    if seconds is not None and seconds < FAST_SECONDS:
        return 4, "fast clean pass"
    return 3, "clean pass"


def _from_row(store: Store, row) -> KataCard | None:
    """The row's card, or None (counted as left out, as minigpt.study.rows does) when a value in
    it is not one the tutor writes: a hand-edited or foreign row never stops a reader."""
    try:
        if not isinstance(row["kata"], str):
            raise BadRowError("a kata name that is not text")
        return KataCard(row["kata"], sch.card_from_json(row["fsrs_json"]), sch.from_iso(row["due"]),
                        rows.count(row["reps"]), rows.count(row["lapses"]))
    except BadRowError:
        skip(store, "kata_card", row["kata"])
        return None


def cards(store: Store) -> dict[str, KataCard]:
    """Every readable kata card, by kata name (unreadable rows are counted and left out)."""
    read = (_from_row(store, r) for r in store.conn.execute("SELECT * FROM kata_card"))
    return {c.kata: c for c in read if c is not None}


def card(store: Store, kata: str) -> KataCard | None:
    row = store.conn.execute("SELECT * FROM kata_card WHERE kata = ?", (kata,)).fetchone()
    return _from_row(store, row) if row else None


def rate(store: Store, kata: str, rating: int, *, why: str, now: datetime | None = None,
         seconds: float | None = None, source: str = "app") -> KataCard:
    """Rate one solve of the kata (the first pass makes its card) and store the next state."""
    now = sch.as_utc(now)
    scheduler = sch.learner_scheduler(store)
    with store.transaction() as conn:
        row = conn.execute("SELECT * FROM kata_card WHERE kata = ?", (kata,)).fetchone()
        # an unreadable row starts afresh (it stays in the log's prev_state), as deck cards do
        before, reps, lapses = rows.answer_start(store, row, f"kata:{kata}", now)
        after = sch.review(scheduler, before, rating, now)
        lapses += int(sch.is_lapse(before, rating))
        conn.execute(
            "INSERT INTO kata_card(kata, fsrs_json, due, fsrs_state, reps, lapses, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(kata) DO UPDATE SET fsrs_json = excluded.fsrs_json, "
            "due = excluded.due, fsrs_state = excluded.fsrs_state, reps = excluded.reps, "
            "lapses = excluded.lapses, updated_at = excluded.updated_at",
            (kata, sch.card_to_json(after), sch.iso(after.due), int(after.state), reps + 1, lapses, sch.iso(now)))
        conn.execute(
            "INSERT INTO kata_review(kata, rating, why, reviewed_at, seconds, source, prev_state) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (kata, rating, why, sch.iso(now), seconds, source, json.dumps(dict(row)) if row else None))
    return KataCard(kata, after, after.due, reps + 1, lapses)


def sync_passed(store: Store) -> list[str]:
    """Make a card for every passed kata that has none, dated at its first pass; the names made."""
    passed = store.conn.execute(
        "SELECT p.kata, p.first_passed_at, p.hints_used FROM kata_progress p "
        "LEFT JOIN kata_card c ON c.kata = p.kata "
        "WHERE p.first_passed_at IS NOT NULL AND c.kata IS NULL").fetchall()
    if passed and store.read_only:
        return []  # nothing can be written; the passes still count where progress is read
    made = []
    for r in passed:
        try:
            when = sch.from_iso(r["first_passed_at"])
            if not isinstance(r["kata"], str):
                raise BadRowError("a kata name that is not text")
        except BadRowError:
            skip(store, "kata_progress", r["kata"])  # left as it is, counted, never carded
            continue
        rating, why = (2, "first pass, hint shown") if r["hints_used"] else (3, "first pass")
        rate(store, r["kata"], rating, why=why, now=when, source="first pass")
        made.append(r["kata"])
    return made


def due(store: Store, now: datetime | None = None) -> list[KataCard]:
    """The katas due now, the longest overdue first (passes not yet carded are carded first)."""
    sync_passed(store)
    now = sch.as_utc(now)
    return sorted((c for c in cards(store).values() if c.is_due(now)), key=lambda c: c.due)


def due_count(store: Store, now: datetime | None = None) -> int:
    """How many katas are due now, without writing (the study counts read this)."""
    now = sch.as_utc(now)
    return sum(c.is_due(now) for c in cards(store).values())


def history(store: Store, kata: str | None = None) -> list[dict]:
    sql = "SELECT * FROM kata_review" + (" WHERE kata = ?" if kata else "") + " ORDER BY id"
    return [dict(r) for r in store.conn.execute(sql, (kata,) if kata else ())]


class Resolve:
    """One re-solve of a due kata, from the stub: counts checks, hints and time, then rates.

    The caller (the kata screen) feeds it each check's outcome; the first pass, or giving up,
    ends it with a rating.
    """

    def __init__(self, store: Store, kata: str, *, now: datetime | None = None, source: str = "app"):
        self.store, self.kata, self.source = store, kata, source
        self.started = sch.as_utc(now)
        self.hints = 0
        self.failed_checks = 0
        self.named_mistake = False
        self.rated: KataCard | None = None
        self.rating: int | None = None

    def checked(self, *, passed: bool, mistake: str | None, now: datetime | None = None) -> int | None:
        """Record one check; returns the rating once the re-solve ends with a pass, else None."""
        if self.rating is not None:
            return None
        if not passed:
            self.failed_checks += 1
            self.named_mistake |= mistake is not None
            return None
        return self._finish(True, now)

    def hint_shown(self, count: int) -> None:
        self.hints = max(self.hints, count)

    def give_up(self, now: datetime | None = None) -> int | None:
        return None if self.rating is not None else self._finish(False, now)

    def _finish(self, passed: bool, now: datetime | None) -> int:
        now = sch.as_utc(now)
        seconds = (now - self.started).total_seconds()
        self.rating, why = rating_for(passed=passed, named_mistake=self.named_mistake, hints=self.hints,
                                      failed_checks=self.failed_checks, seconds=seconds)
        self.rated = rate(self.store, self.kata, self.rating, why=why, now=now, seconds=seconds,
                          source=self.source)
        return self.rating
