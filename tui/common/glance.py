"""What the home screen shows at a glance, gathered from the library (no maths here)."""

from __future__ import annotations

from dataclasses import dataclass, field

from minigpt.store import Store


@dataclass
class Glance:
    lessons_read: int
    lessons_total: int
    cards_due: int | None  # None when the decks cannot be read
    last_run: str | None
    last_lesson: str | None = None  # title of the lesson to continue (tui.common.glance.lesson_to_continue)
    run_active: bool = False  # the last run is training: its line is worth refreshing
    katas_passed: int = 0
    katas_total: int = 0
    plan: list[str] | None = None  # the interview plan's line or two (tui.common.glance.plan_text); None: no date
    ready: float | None = None  # overall interview readiness 0..1 (minigpt.study.readiness)
    # the three weakest lessons: (lesson id, title, figure, next step: read | quiz | recall | katas)
    weakest: list[tuple[str, str, float, str]] = field(default_factory=list)


def plan_text(plan) -> list[str]:
    """The home screen's word on the plan to an interview (minigpt.study.plan.headline): the day,
    on pace or the pace it needs, today's work; a line each, the pace coloured."""
    from minigpt.study.plan import headline
    from minigpt.text import markup_escape

    when, pace, *today = headline(plan)
    colour = "green" if plan.feasible else "red"
    return [when, f"[{colour}]{markup_escape(pace)}[/{colour}]", *today]


def _described_decks():
    """The cached decks with their numeric cards described, not computed: counting needs their ids
    and lessons only, and computing them imports torch (seconds of CPU just after the first
    frame). None when a deck file cannot be read (the flashcards screen reports it)."""
    from minigpt.errors import DeckError
    from minigpt.study.decks import cached_decks

    try:
        return cached_decks(numbers=False)
    except (DeckError, OSError):
        return None


def _cards_due(store: Store) -> tuple[int | None, list[str] | None]:
    from minigpt.errors import DeckError
    from minigpt.study.anki import with_user_cards
    from minigpt.study.review import StudySession

    deck = _described_decks()
    if deck is None:
        return None, None
    try:  # what minigpt.study.review.queue_counts counts, over the cached decks
        session = StudySession(store, with_user_cards(deck, store))
        c = session.counts()
        plan = session.plan()
    except (DeckError, OSError):  # a broken deck file is reported on the flashcards screen
        return None, None
    return c.total, (plan_text(plan) if plan is not None else None)


def last_run() -> tuple[str | None, bool]:
    """The last run in words (name, state and step, best val) and whether it is training now."""
    from minigpt.runs.listing import latest_run

    try:
        run = latest_run()
    except OSError:  # an unreadable runs folder must not break the home screen
        return None, False
    if run is None:
        return None, False
    active = bool(getattr(run.status, "active", False))
    label = (getattr(run, "label", "") or "").strip()  # the run's own name, where it has one
    status = getattr(run.status, "value", run.status)
    best = f"\nbest val {run.best_val:.3f}" if getattr(run, "best_val", None) else ""
    return f"{label or run.name}\n{status} at step {run.step}{best}", active


def lesson_to_continue(store: Store, lesson_ids: list[str]) -> str | None:
    """The one lesson "continue" means on every screen (the lessons list's mark and its c key, the
    home screen's line): the lesson opened last, or, when that one is read, the first unread one."""
    last = store.last_lesson()
    read = store.lessons_read()
    if last in read or last not in lesson_ids:
        unread = [i for i in lesson_ids if i not in read]
        return unread[0] if unread else (last if last in lesson_ids else (lesson_ids[0] if lesson_ids else None))
    return last


def glance(store: Store) -> Glance:
    from minigpt.errors import LessonError
    from minigpt.lessons import load_lessons

    try:
        lessons = load_lessons()
    except LessonError:  # reported on the lessons screen
        lessons = []
    titles = {lesson.id: lesson.title for lesson in lessons}
    run, active = last_run()
    passed, total, per_lesson = _katas(store)
    due, plan = _cards_due(store)
    g = Glance(len(store.lessons_read()), len(lessons), due, run,
               titles.get(lesson_to_continue(store, [lesson.id for lesson in lessons]) or ""), active,
               passed, total, plan)
    if lessons:
        from minigpt.study.cards import Deck
        from minigpt.study.readiness import readiness_for_store

        r = readiness_for_store(store, per_lesson, deck=_described_decks() or Deck())  # unreadable: no cards
        g.ready = r.overall
        g.weakest = [(x.lesson, x.title, x.figure, x.next_step) for x in r.weakest()]
    return g


def _katas(store: Store) -> tuple[int, int, dict[str, tuple[int, int]]]:
    """Katas passed, katas in all, and (passed, katas) per lesson they practise."""
    from minigpt.errors import KataError
    from minigpt.katas.catalogue import load_katas
    from minigpt.katas.history import lesson_katas, totals

    try:
        katas = load_katas()
    except KataError:  # reported on the katas screen
        return 0, 0, {}
    t = totals(store, katas)
    return t.passed, t.total, lesson_katas(store, katas, names=True)
