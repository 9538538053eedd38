"""Interview readiness: one figure per lesson from what the progress database knows (torch-free).

A lesson's figure (0..1) is a weighted mean of four parts, each 0..1:

- ``read``: 1 once the learner reached the lesson's end, else 0;
- ``quiz``: the share right among the lesson's latest tested answers (up to one chapter quiz's
  worth, ``QUIZ_WINDOW``): chapter quizzes and mock interviews both count (review-log modes
  ``quiz:chapter`` and ``interview``); 0 before any;
- ``recall``: the mean FSRS retrievability of the lesson's cards *on the interview day* (local noon
  of the ``plan.date`` setting), or in ``HORIZON_DAYS`` days when none is set: what the learner
  will still know then, not what they saw a minute ago. A card never reviewed counts 0;
- ``katas``: the lesson's katas passed *after reading it*, over the katas that practise it (the
  caller names them: :func:`minigpt.katas.history.lesson_katas`), each credited with FSRS's
  retrievability of its kata card (:mod:`minigpt.study.kata_cards`) at the moment recall is judged:
  a kata passed long ago and not re-solved decays as its schedule says. A pass not yet carded
  counts whole.

Cards left out (flagged or suspended, :func:`minigpt.study.flags.left_out`) count nowhere. A part
that cannot apply (a lesson with no cards has no quiz and no recall; one with no kata has no katas
part) is left out and the weights of the others are scaled to sum to 1. An unread lesson's figure
is scaled by ``UNREAD_SHARE``, so it stays below every read lesson's (whose figure is at least
the read weight, 0.2): flashcards of a lesson never read are not readiness. The overall figure is
the plain mean over lessons. The weakest lessons are the lowest figures (course order breaks
ties), each with one next step: reading an unread lesson, else the part with the biggest weighted
gap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo

from minigpt import settings
from minigpt.store import Store
from minigpt.study import rows
from minigpt.study.flags import left_out

WEIGHTS: dict[str, float] = {"read": 0.2, "quiz": 0.3, "recall": 0.35, "katas": 0.15}
PARTS = tuple(WEIGHTS)
WEIGHTS_TEXT = " + ".join(f"{w:.0%} {p}" for p, w in WEIGHTS.items())
TESTED_MODES = ("quiz:chapter", "interview")  # answers given as under test, not in practice
QUIZ_WINDOW = 8  # minigpt.study.quiz.CHAPTER_QUIZ_SIZE: one chapter quiz's answers
HORIZON_DAYS = 7  # with no interview day set, recall is judged this many days ahead
UNREAD_SHARE = 0.2  # an unread lesson's figure is at most 0.8 · 0.2 = 0.16 < 0.2 (any read one)
JUDGED_AT = time(12)  # the moment of the interview day recall is judged (the plan's, too)

# What each column of ``minigpt progress`` means, one line each.
MEANING: dict[str, str] = {
    "ready": f"{WEIGHTS_TEXT}; unread: a fifth of that",
    "read": "you reached the lesson's end (100%) or not (0%)",
    "quiz": f"share right of its last {QUIZ_WINDOW} answers in chapter quizzes and mock interviews",
    "recall": f"FSRS's forecast of its cards on the interview day (none set: in {HORIZON_DAYS} days)",
    "katas": "katas passed after reading it (each × FSRS recall), over its katas",
}

# What to do about the part that lags most, and the home screen's key that does it.
NEXT_STEP: dict[str, str] = {
    "read": "read the lesson",
    "quiz": "take its chapter quiz",
    "recall": "review its cards",
    "katas": "pass its kata",
}


@dataclass(frozen=True)
class LessonReadiness:
    lesson: str
    title: str
    parts: dict[str, float | None] = field(default_factory=dict)  # None: the part does not apply

    @property
    def figure(self) -> float:
        whole = combine(self.parts)
        return whole * UNREAD_SHARE if self.parts.get("read") == 0.0 else whole

    @property
    def next_step(self) -> str:
        """Reading first for an unread lesson; then the part with the largest weighted gap to full
        marks (the first such in PARTS)."""
        if self.parts.get("read") == 0.0:
            return "read"
        gaps = {p: WEIGHTS[p] * (1 - v) for p, v in self.parts.items() if v is not None}
        return max(PARTS, key=lambda p: (gaps.get(p, -1), -PARTS.index(p)))

    def as_dict(self) -> dict:
        return {"lesson": self.lesson, "title": self.title, "figure": round(self.figure, 4),
                "parts": {p: (None if v is None else round(v, 4)) for p, v in self.parts.items()},
                "next_step": NEXT_STEP[self.next_step]}


@dataclass(frozen=True)
class Readiness:
    lessons: list[LessonReadiness]

    @property
    def overall(self) -> float:
        return sum(r.figure for r in self.lessons) / len(self.lessons) if self.lessons else 0.0

    def weakest(self, n: int = 3) -> list[LessonReadiness]:
        ranked = sorted(enumerate(self.lessons), key=lambda pair: (pair[1].figure, pair[0]))
        return [r for _, r in ranked[:n]]

    def as_dict(self) -> dict:
        return {"overall": round(self.overall, 4), "weights": dict(WEIGHTS),
                "lessons": [r.as_dict() for r in self.lessons],
                "weakest": [r.lesson for r in self.weakest()]}


def combine(parts: dict[str, float | None]) -> float:
    """The weighted mean of the parts that apply (weights rescaled to sum to 1)."""
    used = {p: v for p, v in parts.items() if v is not None}
    total = sum(WEIGHTS[p] for p in used)
    return sum(WEIGHTS[p] * v for p, v in used.items()) / total if total else 0.0


def chapter_quiz_score(store: Store, card_ids: set[str]) -> float:
    """Share right (rating above Again) among the latest tested answers (chapter quizzes and mock
    interviews) on these cards."""
    if not card_ids:
        return 0.0
    marks = ", ".join("?" * len(TESTED_MODES))
    answers = store.conn.execute(
        f"SELECT card_id, rating FROM review_log WHERE mode IN ({marks}) ORDER BY reviewed_at DESC, id DESC",
        TESTED_MODES).fetchall()
    mine = [r["rating"] for r in answers if r["card_id"] in card_ids and r["rating"] in (1, 2, 3, 4)][:QUIZ_WINDOW]
    return sum(rating > 1 for rating in mine) / len(mine) if mine else 0.0


def judged_at(store: Store, now: datetime | None = None, tz: tzinfo | None = None) -> datetime:
    """When recall is judged: local noon of the interview day when one is set and not past, else
    ``HORIZON_DAYS`` days from now."""
    from minigpt.study import scheduler as sch
    from minigpt.study.days import at_local, local_date

    now = sch.as_utc(now)
    day: date | None = settings.get(store, settings.PLAN_DATE)
    if day is not None and day >= local_date(now, tz):
        return max(now, at_local(day, JUDGED_AT, tz))
    return now + timedelta(days=HORIZON_DAYS)


def retrievabilities(store: Store, when: datetime) -> dict[str, float]:
    """Card id → FSRS retrievability at ``when`` (the learner's own scheduler) for every card with
    a schedule (one never answered has none: fsrs gives it 0)."""
    from minigpt.study import scheduler as sch

    when = sch.as_utc(when)
    scheduler = sch.learner_scheduler(store)
    out = {}
    states, _unreadable = rows.card_states(store)  # an unreadable row is left out, and counted
    for card_id, row in states.items():
        out[card_id] = float(scheduler.get_card_retrievability(sch.card_from_json(row["fsrs_json"]), when))
    return out


def kata_retrievabilities(store: Store, when: datetime) -> dict[str, float]:
    """Kata name → FSRS retrievability of its card at ``when`` (the learner's own scheduler)."""
    from minigpt.study import kata_cards
    from minigpt.study import scheduler as sch

    scheduler = sch.learner_scheduler(store)
    return {name: float(card.retrievability(scheduler, when)) for name, card in kata_cards.cards(store).items()}


def _kata_credit(passed, kata_recall: dict[str, float]) -> float:
    """The credit of a lesson's passed katas: a count as it is, or names each by its card's
    retrievability (a pass without a card yet counts 1)."""
    if isinstance(passed, (int, float)):
        return float(passed)
    return sum(kata_recall.get(name, 1.0) for name in passed)


def readiness(store: Store, lessons: list[tuple[str, str]], cards_by_lesson: dict[str, list[str]],
              katas_by_lesson: dict[str, tuple], now: datetime | None = None, *,
              on: datetime | None = None) -> Readiness:
    """Readiness for ``lessons`` ((id, title) in course order).

    ``cards_by_lesson``: the deck's card ids per lesson; ``katas_by_lesson``: (the katas passed
    after reading, by name, or their count; total) per lesson, as
    :func:`minigpt.katas.history.lesson_katas` gives them;
    ``on``: when recall is judged (default :func:`judged_at`).
    """
    read = store.lessons_read()
    when = on if on is not None else judged_at(store, now)
    recall = retrievabilities(store, when)
    kata_recall = kata_retrievabilities(store, when)
    hidden = left_out(store)
    out = []
    for lesson_id, title in lessons:
        cards = [c for c in cards_by_lesson.get(lesson_id, []) if c not in hidden]
        passed, total = katas_by_lesson.get(lesson_id, (0, 0))
        parts: dict[str, float | None] = {
            "read": 1.0 if lesson_id in read else 0.0,
            "quiz": chapter_quiz_score(store, set(cards)) if cards else None,
            "recall": sum(recall.get(c, 0.0) for c in cards) / len(cards) if cards else None,
            "katas": _kata_credit(passed, kata_recall) / total if total else None,
        }
        out.append(LessonReadiness(lesson_id, title, parts))
    return Readiness(out)


def readiness_for_store(store: Store, katas_by_lesson: dict[str, tuple[int, int]], *,
                        deck=None, now: datetime | None = None) -> Readiness:
    """Readiness over the bundled lessons and decks (with the learner's own cards).

    The caller passes the katas per lesson (``minigpt.katas.history.lesson_katas``): the study
    and kata packages are independent layers. A deck that cannot be read (reported on its own
    screen) leaves the cards' parts out rather than failing the whole table. ``deck``: the bundled
    decks as the caller read them (the command line describes numeric cards without torch);
    default the app's cache.
    """
    from minigpt.errors import DeckError, LessonError
    from minigpt.lessons import load_lessons
    from minigpt.study.anki import with_user_cards
    from minigpt.study.decks import cached_decks

    try:
        lessons = [(lesson.id, lesson.title) for lesson in load_lessons()]
    except LessonError:
        lessons = []
    cards: dict[str, list[str]] = {}
    try:
        for card in with_user_cards(cached_decks() if deck is None else deck, store):
            cards.setdefault(card.lesson, []).append(card.id)
    except (DeckError, OSError):
        pass
    return readiness(store, lessons, cards, katas_by_lesson, now)


def meaning() -> list[str]:
    """What each column of the table means, one line each."""
    return [f"{name:<7}{text}" for name, text in MEANING.items()]


def percent(figure: float) -> str:
    return f"{round(100 * figure):3d}%"


def table(r: Readiness) -> str:
    """The readiness table as plain text (``minigpt progress``)."""
    def cell(v: float | None) -> str:
        return "   -" if v is None else percent(v)

    width = min(max([len(x.title) for x in r.lessons] + [6]), 44)  # the table fits 80 columns

    def name(title: str) -> str:
        return title if len(title) <= width else title[:width - 1] + "…"

    head = f"{'lesson':<{width}}  ready  read  quiz recall katas"
    lines = [head, "-" * len(head)]
    for x in r.lessons:
        lines.append(f"{name(x.title):<{width}}  {percent(x.figure)}  " + "  ".join(cell(x.parts[p]) for p in PARTS))
    lines += ["", *meaning()]
    lines += ["", f"overall {percent(r.overall).strip()}", "weakest:"]
    lines += [f"  {x.title} ({percent(x.figure).strip()}): {NEXT_STEP[x.next_step]}" for x in r.weakest()]
    return "\n".join(lines)

