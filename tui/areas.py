"""The areas listed on the home screen. Each area is a screen built by its own module.

An area appears here only once its screen exists (no placeholders). To add one, append an
``Area`` whose ``open`` pushes the screen; the home screen, the command palette and the help
screen pick it up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from tui.app import TutorApp


@dataclass(frozen=True)
class Area:
    id: str
    title: str
    key: str  # single key on the home screen
    description: str
    open: Callable[["TutorApp"], None]


def _open_lessons(app: "TutorApp") -> None:
    from tui.screens.lessons import LessonsScreen

    app.push_screen(LessonsScreen())


AREAS: list[Area] = [
    Area("lessons", "Lessons", "l", "The course, chapter by chapter, with worked numbers", _open_lessons),
]


def area(area_id: str) -> Area:
    for a in AREAS:
        if a.id == area_id:
            return a
    raise KeyError(area_id)
