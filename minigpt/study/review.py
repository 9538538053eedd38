"""Study sessions over the progress database: queue, rate, preview, undo, cram, bury, suspend.

Every answer is one SQLite transaction (``Store.transaction()``, BEGIN IMMEDIATE) that reads the
card's current row, asks fsrs for the next state, writes the new row and appends a review_log
row holding the previous row as JSON. So a killed process loses nothing committed, two processes
answering at once serialise on the write lock, and ``undo`` restores the exact previous row.
``undo`` only takes back answers this session gave (it remembers their log ids): another app
instance's answers on the same database are never touched, and an answer is not undone once
another session has answered the same card after it (that would erase the later answer).

Order: learning cards first (by due), then due reviews, then new cards in lesson order (the
lessons' ``order``, then terms before their reverse, cloze, numbers and questions). Siblings (cards
of one note, see ``StudyCard.note_id``) are never next to each other when another card can go
between them. With the setting ``study.new_from_read_lessons`` on, only cards of lessons the
learner has read are introduced.

Counts: "new" = a card with no card_state row (never answered), limited per local day (the
learner's, ``minigpt.study.days``) by the setting ``study.new_per_day`` (default 20), or, with an
interview date set, by the plan's share (``minigpt.study.plan``: only cards in its scope, plus
the cards it brings forward today); "learning" = fsrs Learning/Relearning and due within
the learn-ahead window (LEARN_AHEAD, Anki's 20 minutes: a learning card due in 10 minutes is
shown early once nothing else is left, rather than "nothing to study"); "due" = fsrs Review and
due now; "katas" = passed katas due to be solved again (``minigpt.study.kata_cards``: they are
not in the queue, the kata screen plays them, but they count in the total). Suspended cards, cards buried until later and cards flagged as wrong
(``minigpt.study.flags``, until the flag is resolved) are skipped.
A lapse is an Again on a card in the Review state; 8 lapses flag the card as a leech.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from minigpt import settings
from minigpt.errors import BadRowError, UndoError
from minigpt.store import Store
from minigpt.study import kata_cards, rows, scheduler
from minigpt.study import plan as planning
from minigpt.study.card_rows import ensure_row, restore_row
from minigpt.study.cards import Deck
from minigpt.study.days import start_of_local_day, start_of_next_local_day
from minigpt.study.flags import left_out
from minigpt.study.formats import LOG_MODES
from minigpt.study.order import new_card_order, space_siblings

LEECH_LAPSES = 8
MODES = ("review", "cram", "quiz", "interview")  # interview: minigpt.study.interview
# Each quiz mode is logged under its own name so the stats can tell them apart; all of them
# move the schedule like "quiz" does.
QUIZ_MODES = LOG_MODES


@dataclass(frozen=True)
class CardStatus:
    card_id: str
    fsrs: scheduler.Card | None          # None: never answered (new)
    due: datetime | None
    reps: int
    lapses: int
    suspended: bool
    buried_until: datetime | None

    @property
    def is_new(self) -> bool:
        return self.reps == 0

    @property
    def is_leech(self) -> bool:
        return self.lapses >= LEECH_LAPSES


MAX_LOGGED_ANSWER_CHARS = 20_000  # the longest answer the log keeps (an explanation's worth; a paste is cut)
LEARN_AHEAD = timedelta(minutes=20)  # Anki's default "learn ahead limit"


@dataclass(frozen=True)
class Counts:
    new: int
    learning: int
    due: int
    katas: int = 0  # katas due to be solved again (minigpt.study.kata_cards), studied on the kata screen

    @property
    def total(self) -> int:
        return self.new + self.learning + self.due + self.katas


def _row_to_dict(row) -> dict | None:
    return dict(row) if row is not None else None



class StudySession:
    """Headless study logic; the TUI calls these methods and only draws the results."""

    def __init__(self, store: Store, deck: Deck, *, desired_retention: float | None = None,
                 lesson_order: dict[str, int] | None = None, tz: tzinfo | None = None):
        self.store = store
        self.deck = deck
        self.scheduler = scheduler.learner_scheduler(store, desired_retention)  # the settings', unless given
        self.tz = tz  # the learner's days (None: this machine's zone)
        self._lesson_order = lesson_order
        self._plans = planning.PlanCache()
        self._answered: list[int] = []   # review_log ids this session wrote, oldest first

    @property
    def lesson_order(self) -> dict[str, int]:
        """Lesson id → its ``order`` (read once from the lesson files; empty if unreadable)."""
        if self._lesson_order is None:
            from minigpt.errors import LessonError
            from minigpt.lessons import load_lessons

            try:
                self._lesson_order = {l.id: l.order for l in load_lessons()}
            except LessonError:
                self._lesson_order = {}
        return self._lesson_order

    def note_of(self, card_id: str) -> str:
        card = self.deck.get(card_id)
        return card.note_id if card is not None else card_id

    # -- reading -------------------------------------------------------------------------------
    def _row(self, card_id: str):
        return self.store.conn.execute("SELECT * FROM card_state WHERE card_id = ?",
                                       (card_id,)).fetchone()

    def status(self, card_id: str) -> CardStatus:
        """The card's schedule; a row that cannot be read is left out (counted) and reads as none."""
        row = self._row(card_id)
        if row is None:
            return CardStatus(card_id, None, None, 0, 0, False, None)
        try:
            return CardStatus(card_id, scheduler.card_from_json(row["fsrs_json"]), scheduler.from_iso(row["due"]),
                              rows.count(row["reps"]), rows.count(row["lapses"]), bool(row["suspended"]),
                              scheduler.from_iso(row["buried_until"]) if row["buried_until"] else None)
        except BadRowError:
            rows.skip(self.store, "card_state", card_id)
            return CardStatus(card_id, None, None, 0, 0, False, None)

    def new_per_day(self) -> int:
        return settings.get(self.store, settings.NEW_PER_DAY)

    def set_new_per_day(self, n: int) -> None:
        settings.set(self.store, settings.NEW_PER_DAY, max(0, int(n)))

    def new_from_read_lessons(self) -> bool:
        return settings.get(self.store, settings.NEW_FROM_READ_LESSONS)

    def set_new_from_read_lessons(self, on: bool) -> None:
        settings.set(self.store, settings.NEW_FROM_READ_LESSONS, bool(on))

    def _new_order(self, card_ids: list[str]) -> list[str]:
        read = self.store.lessons_read() if self.new_from_read_lessons() else None
        return new_card_order(self.deck, card_ids, self.lesson_order, only_lessons=read)

    def plan(self, now: datetime | None = None) -> planning.Plan | None:
        """The plan to the interview date, or None without a date (or once the day has come)."""
        return self._plans.get(self.store, self.deck, now=now, tz=self.tz, new_per_day=self.new_per_day(),
                               scheduler=self.scheduler, lesson_order=lambda: self.lesson_order)

    def new_introduced_today(self, now: datetime | None = None) -> int:
        day = scheduler.iso(start_of_local_day(now, self.tz))
        return self.store.conn.execute(
            "SELECT COUNT(*) FROM review_log WHERE was_new = 1 AND mode = 'review' "
            "AND reviewed_at >= ?", (day,)).fetchone()[0]

    def _states(self) -> dict[str, dict | None]:
        """Each card's row by id; None for a row that cannot be read (counted): such a card is
        neither new nor due, it waits, hidden, for a repair or the learner's next answer to it."""
        good, bad = rows.card_states(self.store)
        return {**good, **dict.fromkeys(bad)}

    def queue(self, now: datetime | None = None, *, lesson: str | None = None) -> list[str]:
        """Card ids to study now: learning first (by due), then due reviews, then new cards."""
        now = scheduler.as_utc(now)
        stamp = scheduler.iso(now)
        states = self._states()
        out = left_out(self.store)  # flagged as wrong or suspended: never queued
        ahead_stamp = scheduler.iso(now + LEARN_AHEAD)
        learning, due, new, ahead, hidden = [], [], [], [], set()
        for card in self.deck:
            if (lesson and card.lesson != lesson) or card.id in out:
                continue
            if card.id not in states:
                new.append(card.id)
                continue
            st = states[card.id]
            if st is None or (st["buried_until"] and st["buried_until"] > stamp):
                hidden.add(card.id)
                continue
            if st["reps"] == 0:
                new.append(card.id)
            elif st["due"] <= stamp:
                bucket = due if st["fsrs_state"] == scheduler.State.Review else learning
                bucket.append((st["due"], card.id))
            elif st["fsrs_state"] != scheduler.State.Review and st["due"] <= ahead_stamp:
                ahead.append((st["due"], card.id))  # learning, due soon: shown once nothing else is
        plan = self.plan(now)
        if plan is None:
            new = self._new_order(new)[:max(0, self.new_per_day() - self.new_introduced_today(now))]
        else:  # the plan's share of its scope, and the cards it brings forward for the day
            waiting, taken = set(new), hidden | {c for _, c in learning + due}
            new = [c for c in plan.new_ids_today if c in waiting]
            due += [("~", c) for c in plan.ahead_ids_today
                    if c not in taken and (not lesson or self.deck[c].lesson == lesson)]
        ordered = ([c for _, c in sorted(learning)] + [c for _, c in sorted(due)]
                   + new + [c for _, c in sorted(ahead)])
        return space_siblings(ordered, self.note_of)

    def counts(self, now: datetime | None = None, *, lesson: str | None = None) -> Counts:
        now = scheduler.as_utc(now)
        states = self._states()
        q = self.queue(now, lesson=lesson)
        new = sum(1 for c in q if c not in states or states[c]["reps"] == 0)
        due = sum(1 for c in q if c in states and states[c]["fsrs_state"] == scheduler.State.Review)
        katas = kata_cards.due_count(self.store, now) if lesson is None else 0
        return Counts(new=new, learning=len(q) - new - due, due=due, katas=katas)

    def next_due(self, now: datetime | None = None) -> datetime | None:
        """When the next card of the deck not in the queue now comes due (a learning card past
        the learn-ahead window, a review later on), or None: the empty screen waits for it."""
        now = scheduler.as_utc(now)
        out = left_out(self.store)
        for card_id, due in self.store.conn.execute(
                "SELECT card_id, due FROM card_state WHERE suspended = 0 AND reps > 0 AND due > ? "
                "ORDER BY due", (scheduler.iso(now + LEARN_AHEAD),)):
            if card_id in self.deck.cards and card_id not in out:
                try:
                    return scheduler.from_iso(due)
                except BadRowError:
                    rows.skip(self.store, "card_state", card_id)
        return None

    def next_card(self, now: datetime | None = None, *, lesson: str | None = None,
                  after: str | None = None) -> str | None:
        """The card to show now; ``after`` (the card just shown) keeps its siblings from being
        next, and is itself skipped while another card is waiting."""
        q = self.queue(now, lesson=lesson)
        if after is not None and len(q) > 1:
            q = space_siblings([c for c in q if c != after], self.note_of, after) + (
                [after] if after in q else [])
        return q[0] if q else None

    def preview(self, card_id: str, now: datetime | None = None) -> dict[int, timedelta]:
        """Interval each rating 1-4 would give, e.g. for labels "Good · 3d"."""
        now = scheduler.as_utc(now)
        st = self.status(card_id)
        card = st.fsrs if st.fsrs is not None else scheduler.new_card(card_id, now)
        return scheduler.preview(self.scheduler, card, now)

    def button_labels(self, card_id: str, now: datetime | None = None) -> dict[int, str]:
        return {r: f"{scheduler.RATING_NAMES[r]} · {scheduler.format_interval(d)}"
                for r, d in self.preview(card_id, now).items()}

    # -- writing -------------------------------------------------------------------------------
    def _check(self, card_id: str) -> None:
        if card_id not in self.deck.cards:
            raise KeyError(f"unknown card id {card_id!r}")

    def rate(self, card_id: str, rating: int, *, answer: str | None = None,
             duration_ms: int | None = None, now: datetime | None = None,
             mode: str = "review") -> CardStatus:
        """Record one answer and return the card's new status, all in one transaction.

        mode "review" (and "quiz") moves the schedule; "cram" only logs the answer, which is kept
        up to MAX_LOGGED_ANSWER_CHARS.
        """
        self._check(card_id)
        answer = answer[:MAX_LOGGED_ANSWER_CHARS] if answer else answer
        if rating not in scheduler.RATINGS:
            raise ValueError(f"rating must be 1-4, not {rating!r}")
        if mode not in MODES and mode not in QUIZ_MODES:
            raise ValueError(f"mode must be one of {MODES + QUIZ_MODES}, not {mode!r}")
        now = scheduler.as_utc(now)
        stamp = scheduler.iso(now)
        with self.store.transaction() as conn:
            row = conn.execute("SELECT * FROM card_state WHERE card_id = ?", (card_id,)).fetchone()
            prev = _row_to_dict(row)
            if mode == "cram":
                log = conn.execute(
                    "INSERT INTO review_log(card_id, rating, mode, answer, reviewed_at, duration_ms,"
                    " was_new, prev_state) VALUES (?, ?, 'cram', ?, ?, ?, 0, NULL)",
                    (card_id, rating, answer, stamp, duration_ms))
            else:
                before, reps, lapses = rows.answer_start(self.store, row, card_id, now)
                after = scheduler.review(self.scheduler, before, rating, now)
                lapses += int(scheduler.is_lapse(before, rating))
                reps += 1
                conn.execute(
                    """INSERT INTO card_state(card_id, fsrs_json, due, fsrs_state, reps, lapses,
                                              suspended, buried_until, updated_at)
                       VALUES (?, ?, ?, ?, ?, ?, 0, NULL, ?)
                       ON CONFLICT(card_id) DO UPDATE SET fsrs_json = excluded.fsrs_json,
                         due = excluded.due, fsrs_state = excluded.fsrs_state,
                         reps = excluded.reps, lapses = excluded.lapses,
                         buried_until = NULL, updated_at = excluded.updated_at""",
                    (card_id, scheduler.card_to_json(after), scheduler.iso(after.due), int(after.state),
                     reps, lapses, stamp))
                log = conn.execute(
                    "INSERT INTO review_log(card_id, rating, mode, answer, reviewed_at, duration_ms,"
                    " was_new, prev_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (card_id, rating, mode, answer, stamp, duration_ms,
                     int(reps == 1), json.dumps(prev, default=repr) if prev else None))
        self._answered.append(log.lastrowid)
        return self.status(card_id)

    def deck_in_play(self) -> Deck:
        """The deck less the cards left out (flagged or suspended): what quizzes and interviews ask."""
        return self.deck.without(left_out(self.store))

    def cram(self, card_id: str, rating: int, **kw) -> CardStatus:
        """Review ahead: the answer is logged with mode "cram" and the schedule is untouched."""
        return self.rate(card_id, rating, mode="cram", **kw)

    def cram_queue(self, *, lesson: str | None = None, seed: int | None = None) -> list[str]:
        """The cards met so far (of a lesson opened, or answered before, or imported), optionally
        of one lesson, not suspended, soonest due first: cramming reviews, it does not introduce
        the cards of lessons never opened."""
        states = self._states()
        opened = {r[0] for r in self.store.conn.execute("SELECT lesson_id FROM lesson_progress")}
        out = left_out(self.store)
        ids = [c.id for c in self.deck if (not lesson or c.lesson == lesson) and c.id not in out
               and (c.id in states or not c.lesson or c.lesson in opened)]
        ids = [i for i in ids if not (i in states and states[i] is None)]  # unreadable: hidden
        return sorted(ids, key=lambda i: (states[i]["due"] if i in states else "", i))

    @property
    def can_undo(self) -> bool:
        return bool(self._answered)

    def undo(self) -> str | None:
        """Undo this session's most recent answer: delete its log row, restore the previous row.

        Returns the card id, or None when this session has nothing left to undo. Raises
        ``UndoError`` (changing nothing) when another session has since answered the same card.
        A suspension or a bury made since (in another window) is kept: undoing an answer is not
        un-suspending or un-burying.
        """
        while self._answered:
            log_id = self._answered[-1]
            with self.store.transaction() as conn:
                row = conn.execute("SELECT * FROM review_log WHERE id = ?", (log_id,)).fetchone()
                if row is None:  # already gone (the database was reset): try the one before
                    self._answered.pop()
                    continue
                if row["mode"] != "cram" and conn.execute(
                        "SELECT 1 FROM review_log WHERE card_id = ? AND id > ? AND mode != 'cram'",
                        (row["card_id"], log_id)).fetchone():
                    raise UndoError("this card was answered again elsewhere since (another "
                                    "window of the tutor?); undoing would erase that answer")
                conn.execute("DELETE FROM review_log WHERE id = ?", (log_id,))
                if row["mode"] != "cram":
                    restore_row(conn, row["card_id"], row["prev_state"])
            self._answered.pop()
            return row["card_id"]
        return None

    def suspend(self, card_id: str, suspended: bool = True, now: datetime | None = None) -> None:
        """Take a card out of every queue (or put it back). A new card gets a row, unanswered."""
        self._check(card_id)
        now = scheduler.as_utc(now)
        with self.store.transaction() as conn:
            ensure_row(conn, card_id, now)
            conn.execute("UPDATE card_state SET suspended = ?, updated_at = ? WHERE card_id = ?",
                         (int(suspended), scheduler.iso(now), card_id))

    def bury(self, card_id: str, now: datetime | None = None) -> datetime:
        """Hide a card until the start of the learner's next day (local midnight); returns that time (UTC)."""
        self._check(card_id)
        now = scheduler.as_utc(now)
        until = start_of_next_local_day(now, self.tz)
        with self.store.transaction() as conn:
            ensure_row(conn, card_id, now)
            conn.execute("UPDATE card_state SET buried_until = ?, updated_at = ? WHERE card_id = ?",
                         (scheduler.iso(until), scheduler.iso(now), card_id))
        return until

    def leeches(self) -> list[str]:
        rows = self.store.conn.execute(
            "SELECT card_id FROM card_state WHERE lapses >= ? ORDER BY lapses DESC, card_id",
            (LEECH_LAPSES,))
        return [r[0] for r in rows]


def queue_counts(store: Store, now: datetime | None = None) -> Counts:
    """New / learning / due counts over the bundled decks plus the learner's imported cards."""
    from minigpt.study.anki import with_user_cards
    from minigpt.study.decks import cached_decks

    return StudySession(store, with_user_cards(cached_decks(), store)).counts(now)


def history(store: Store, card_id: str | None = None) -> list[dict]:
    """Review log rows, oldest first (all cards, or one)."""
    if card_id is None:
        rows = store.conn.execute("SELECT * FROM review_log ORDER BY id")
    else:
        rows = store.conn.execute("SELECT * FROM review_log WHERE card_id = ? ORDER BY id",
                                  (card_id,))
    return [dict(r) for r in rows]
