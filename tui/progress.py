"""What the home screen shows at a glance, gathered from the library (no maths here)."""

from __future__ import annotations

from dataclasses import dataclass

from minigpt.store import Store


@dataclass
class Glance:
    lessons_read: int
    lessons_total: int
    cards_due: int | None  # None when the decks cannot be read
    last_run: str | None
    last_lesson: str | None = None  # title of the lesson opened most recently


def _cards_due(store: Store) -> int | None:
    from minigpt.errors import DeckError
    from minigpt.study.anki import with_user_cards
    from minigpt.study.decks import cached_decks
    from minigpt.study.review import StudySession

    try:  # what minigpt.study.review.queue_counts counts, over the cached decks
        c = StudySession(store, with_user_cards(cached_decks(), store)).counts()
    except (DeckError, OSError):  # a broken deck file is reported on the flashcards screen
        return None
    return c.due + c.learning + c.new


def _last_run() -> str | None:
    from minigpt.runs.listing import latest_run

    try:
        run = latest_run()
    except OSError:  # an unreadable runs folder must not break the home screen
        return None
    if run is None:
        return None
    label = (getattr(run, "label", "") or "").strip()  # the run's own name, where it has one
    status = getattr(run.status, "value", run.status)
    best = f"\nbest val {run.best_val:.3f}" if getattr(run, "best_val", None) else ""
    return f"{label or run.name}\n{status} at step {run.step}{best}"


def glance(store: Store) -> Glance:
    from minigpt.errors import LessonError
    from minigpt.lessons import load_lessons

    try:
        lessons = load_lessons()
    except LessonError:  # reported on the lessons screen
        lessons = []
    titles = {lesson.id: lesson.title for lesson in lessons}
    return Glance(len(store.lessons_read()), len(lessons), _cards_due(store), _last_run(),
                  titles.get(store.last_lesson() or ""))
