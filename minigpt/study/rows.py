"""The learner's rows, read so that no row can stop a reader.

A progress database can be valid SQLite and still hold a row the tutor never wrote: a copy edited
by hand, a shared file, an older tool. Bad JSON in a card's FSRS state, a due time that is not a
time, a review at "yesterday", an interview scored 1e308: each used to end ``minigpt progress``,
``fsrs status``, ``fsrs fit``, ``plan`` or the flashcards in a traceback. The readers here check
every value they hand on; a row that fails is left out (never changed or deleted: the learner or a
later version can still repair it) and counted (``minigpt.skipped_rows``, which says in one line
how many rows of which tables were left out: the CLI prints it on stderr, the app shows it once).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from minigpt.errors import BadRowError
from minigpt.skipped_rows import skip
from minigpt.store import Store
from minigpt.study import scheduler

MAX_COUNT = 1 << 31  # reps, lapses, questions: a count the tutor writes is far below this
MAX_DURATION_MS = 24 * 3600 * 1000  # an answer's time: longer than a day is not a real answer


def count(value: object) -> int:
    """A stored count (reps, lapses, questions); ``BadRowError`` for text, a float, a negative."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_COUNT:
        raise BadRowError(f"{value!r} is not a count")
    return value


def fraction(value: object) -> float:
    """A stored score between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise BadRowError(f"{value!r} is not a score between 0 and 1")
    return float(value)


def positive(value: object) -> float:
    """A stored positive finite number (an interview's minutes)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not (0 < value < MAX_COUNT):
        raise BadRowError(f"{value!r} is not a positive number in range")
    return float(value)


def readable_state(store: Store, row) -> bool:
    """Whether a ``card_state`` row holds only values the tutor writes; one that does not is counted."""
    try:
        if not isinstance(row["card_id"], str):
            raise BadRowError("a card id that is not text")
        scheduler.card_from_json(row["fsrs_json"])
        scheduler.from_iso(row["due"])
        if row["buried_until"] is not None:
            scheduler.from_iso(row["buried_until"])
        count(row["reps"]), count(row["lapses"]), count(row["suspended"])
        if row["fsrs_state"] not in (1, 2, 3):
            raise BadRowError("an FSRS state that is not 1, 2 or 3")
    except BadRowError:
        skip(store, "card_state", row["card_id"])
        return False
    return True


def card_states(store: Store, where: str = "", args: tuple = ()) -> tuple[dict[str, dict], set]:
    """The ``card_state`` rows that can be read, by card id (a dict per row, due as stored), and
    the ids of those that cannot (counted): a reader shows neither as new nor as due."""
    good, bad = {}, set()
    for row in store.conn.execute("SELECT * FROM card_state" + (f" WHERE {where}" if where else ""), args):
        if readable_state(store, row):
            good[row["card_id"]] = dict(row)
        else:
            bad.add(row["card_id"])
    return good, bad


def answer_start(store: Store, row, card_id: str, now: datetime) -> tuple[scheduler.Card, int, int]:
    """The card, reps and lapses a new answer starts from: a new card when there is no row, or when
    the row cannot be read (counted; the row itself stays in the review log's prev_state)."""
    if row is not None:
        try:
            return scheduler.card_from_json(row["fsrs_json"]), count(row["reps"]), count(row["lapses"])
        except BadRowError:
            skip(store, "card_state", card_id)
    return scheduler.new_card(card_id, now), 0, 0


@dataclass(frozen=True)
class Review:
    id: int
    card_id: str
    rating: int
    reviewed_at: datetime
    duration_ms: int | None


def reviews(store: Store, where: str = "", args: tuple = ()) -> list[Review]:
    """The ``review_log`` rows that can be read, oldest first (by id); the others are counted."""
    out = []
    for row in store.conn.execute("SELECT id, card_id, rating, reviewed_at, duration_ms FROM review_log"
                                  + (f" WHERE {where}" if where else "") + " ORDER BY id", args):
        try:
            if not isinstance(row["card_id"], str) or row["rating"] not in scheduler.RATINGS:
                raise BadRowError("a card id or rating out of range")
            duration = row["duration_ms"]
            if duration is not None:
                if isinstance(duration, float) and math.isfinite(duration):
                    duration = int(duration)
                if isinstance(duration, bool) or not isinstance(duration, int) or not 0 <= duration <= MAX_DURATION_MS:
                    duration = None  # an answer's time is a detail: a bad one is dropped, the review kept
            out.append(Review(row["id"], row["card_id"], row["rating"], scheduler.from_iso(row["reviewed_at"]), duration))
        except BadRowError:
            skip(store, "review_log", row["id"])
    return out
