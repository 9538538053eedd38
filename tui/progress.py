"""What the home screen shows at a glance, gathered from the library (no maths here)."""

from __future__ import annotations

from dataclasses import dataclass

from minigpt.store import Store


@dataclass
class Glance:
    lessons_read: int
    lessons_total: int
    cards_due: int | None  # None until the flashcards area exists
    last_run: str | None


def _cards_due(store: Store) -> int | None:
    try:
        from minigpt.study import review
    except ImportError:
        return None
    counts = getattr(review, "queue_counts", None)
    if counts is None:
        return None
    try:
        c = counts(store)
    except Exception:
        return None
    return int(getattr(c, "due", 0)) + int(getattr(c, "learning", 0)) + int(getattr(c, "new", 0))


def _last_run() -> str | None:
    try:
        from minigpt.runs import latest_run
    except ImportError:
        return None
    try:
        run = latest_run()
    except Exception:
        return None
    if run is None:
        return None
    best = f", best val {run.best_val:.3f}" if getattr(run, "best_val", None) else ""
    return f"{run.name}: {run.status}, step {run.step}{best}"


def glance(store: Store) -> Glance:
    from minigpt.lessons import load_lessons

    try:
        total = len(load_lessons())
    except Exception:
        total = 0
    return Glance(len(store.lessons_read()), total, _cards_due(store), _last_run())
