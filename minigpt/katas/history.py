"""A learner's record with the katas, in the progress database (migration 4; torch-free).

Attempts and passes, the hints used (they come one at a time, so the count is how far the
learner went), the time from first opening a kata to its first pass, whether the solution was
shown before any pass (gave up), and the draft as last left. A kata counts toward each lesson it
practises once passed, and toward readiness once passed after the lesson was read
(:func:`lesson_katas`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from minigpt.katas.catalogue import Kata
from minigpt.skipped_rows import skip
from minigpt.store import Store, _utc_now

MAX_COUNT = 1 << 31  # attempts, passes, hints: far beyond what a learner makes
MAX_SECONDS = 1e10  # time to pass: three centuries


@dataclass(frozen=True)
class KataRecord:
    kata: str
    attempts: int = 0
    passes: int = 0
    hints_used: int = 0
    seconds_to_pass: float | None = None
    gave_up: bool = False
    draft: str | None = None

    @property
    def passed(self) -> bool:
        return self.passes > 0

    @property
    def status(self) -> str:
        if self.passed:
            return "passed"
        if self.gave_up:
            return "gave up"
        return "tried" if self.attempts else "new"


def _seconds_between(start: str, end: str) -> float:
    fmt = "%Y-%m-%dT%H:%M:%S.%fZ"
    try:
        return (datetime.strptime(end, fmt) - datetime.strptime(start, fmt)).total_seconds()
    except (TypeError, ValueError):  # (an opening time the tutor did not write: no time to pass)
        return 0.0


def _ensure(conn, kata: str, now: str) -> None:
    conn.execute("INSERT INTO kata_progress(kata, opened_at, updated_at) VALUES (?, ?, ?) "
                 "ON CONFLICT(kata) DO NOTHING", (kata, now, now))


def mark_opened(store: Store, kata: str) -> None:
    """The clock for time to pass starts the first time a kata is opened (later openings keep it)."""
    with store.transaction() as conn:
        _ensure(conn, kata, _utc_now())


def record_attempt(store: Store, kata: str, *, passed: bool, cases_failed: int, cases_total: int,
                   source: str = "app") -> None:
    now = _utc_now()
    with store.transaction() as conn:
        _ensure(conn, kata, now)
        conn.execute("INSERT INTO kata_attempts(kata, attempted_at, passed, cases_failed, cases_total, source) "
                     "VALUES (?, ?, ?, ?, ?, ?)", (kata, now, int(passed), cases_failed, cases_total, source))
        row = conn.execute("SELECT opened_at, first_passed_at FROM kata_progress WHERE kata = ?", (kata,)).fetchone()
        first = passed and row["first_passed_at"] is None
        conn.execute(
            "UPDATE kata_progress SET attempts = attempts + 1, passes = passes + ?, updated_at = ?, "
            "first_passed_at = COALESCE(first_passed_at, ?), seconds_to_pass = COALESCE(seconds_to_pass, ?) "
            "WHERE kata = ?",
            (int(passed), now, now if first else None,
             _seconds_between(row["opened_at"], now) if first else None, kata))


def record_hints(store: Store, kata: str, shown: int) -> None:
    now = _utc_now()
    with store.transaction() as conn:
        _ensure(conn, kata, now)
        conn.execute("UPDATE kata_progress SET hints_used = MAX(hints_used, ?), updated_at = ? WHERE kata = ?",
                     (shown, now, kata))


def record_solution_shown(store: Store, kata: str) -> None:
    """The solution was shown: giving up when the kata had not been passed yet."""
    now = _utc_now()
    with store.transaction() as conn:
        _ensure(conn, kata, now)
        conn.execute("UPDATE kata_progress SET gave_up_at = COALESCE(gave_up_at, ?), updated_at = ? "
                     "WHERE kata = ? AND passes = 0", (now, now, kata))


def save_draft(store: Store, kata: str, draft: str) -> None:
    now = _utc_now()
    with store.transaction() as conn:
        _ensure(conn, kata, now)
        conn.execute("UPDATE kata_progress SET draft = ?, updated_at = ? WHERE kata = ?", (draft, now, kata))


def _count(value) -> bool:
    return type(value) is int and 0 <= value < MAX_COUNT


def _readable(r) -> bool:
    """Whether a ``kata_progress`` row holds only values the tutor writes (one that does not is
    left out by :func:`records`, and counted)."""
    seconds = r["seconds_to_pass"]
    return (isinstance(r["kata"], str) and _count(r["attempts"]) and _count(r["passes"]) and _count(r["hints_used"])
            and (seconds is None or (type(seconds) in (int, float) and 0 <= seconds < MAX_SECONDS))
            and (r["draft"] is None or isinstance(r["draft"], str)))


def records(store: Store) -> dict[str, KataRecord]:
    found = {}
    for r in store.conn.execute("SELECT kata, attempts, passes, hints_used, seconds_to_pass, gave_up_at, draft "
                                "FROM kata_progress"):
        if not _readable(r):
            skip(store, "kata_progress", r["kata"])
            continue
        found[r["kata"]] = KataRecord(r["kata"], r["attempts"], r["passes"], r["hints_used"], r["seconds_to_pass"],
                                      r["gave_up_at"] is not None, r["draft"])
    return found


def record(store: Store, kata: str) -> KataRecord:
    return records(store).get(kata, KataRecord(kata))


@dataclass(frozen=True)
class KataTotals:
    passed: int
    total: int
    attempts: int
    hints_used: int
    gave_up: int
    median_seconds_to_pass: float | None


def totals(store: Store, katas: list[Kata]) -> KataTotals:
    mine = records(store)
    names = {k.name for k in katas}
    rows = [r for name, r in mine.items() if name in names]
    times = sorted(r.seconds_to_pass for r in rows if r.seconds_to_pass is not None)
    median = times[len(times) // 2] if times else None
    return KataTotals(sum(r.passed for r in rows), len(katas), sum(r.attempts for r in rows),
                      sum(r.hints_used for r in rows), sum(r.gave_up and not r.passed for r in rows), median)


def lesson_katas(store: Store, katas: list[Kata], *, after_reading: bool = True,
                 names: bool = False) -> dict[str, tuple]:
    """For each lesson a kata practises: (katas passed, katas). With ``after_reading`` (readiness's
    credit) a kata counts toward a lesson only when it passed at or after the learner read that
    lesson: a kata passed before, or for another lesson, is not evidence of this one. With
    ``names``, the passed katas are given by name (readiness credits each by its card's FSRS
    retrievability)."""
    mine = records(store)
    read_at = {r[0]: r[1] for r in store.conn.execute(
        "SELECT lesson_id, read_at FROM lesson_progress WHERE read_at IS NOT NULL")}
    last_pass = {r[0]: r[1] for r in store.conn.execute(
        "SELECT kata, MAX(attempted_at) FROM kata_attempts WHERE passed = 1 GROUP BY kata")}
    out: dict[str, list] = {}
    for kata in katas:
        for lesson in kata.lessons:
            entry = out.setdefault(lesson, [[], 0])
            if after_reading:
                passed = lesson in read_at and last_pass.get(kata.name, "") >= read_at[lesson]
            else:
                passed = mine.get(kata.name, KataRecord(kata.name)).passed
            entry[0] += [kata.name] if passed else []
            entry[1] += 1
    return {lesson: (tuple(a) if names else len(a), b) for lesson, (a, b) in out.items()}


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    minutes = seconds / 60
    if minutes < 1:
        return f"{seconds:.0f} s"
    if minutes < 60:
        return f"{minutes:.0f} min"
    return f"{minutes / 60:.1f} h"


