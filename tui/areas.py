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


def _open_attention(app: "TutorApp") -> None:
    from tui.screens.attention_stepper import AttentionStepperScreen

    app.push_screen(AttentionStepperScreen())


def _open_playground(app: "TutorApp") -> None:
    from tui.screens.playground import PlaygroundScreen

    app.push_screen(PlaygroundScreen())


def _open_training(app: "TutorApp") -> None:
    from tui.screens.training import open_training

    open_training(app)


def _open_flashcards(app: "TutorApp") -> None:
    from tui.screens.flashcards import FlashcardsScreen

    app.push_screen(FlashcardsScreen())


def _open_quiz(app: "TutorApp") -> None:
    from tui.screens.quiz import QuizScreen

    app.push_screen(QuizScreen())


def _open_study_stats(app: "TutorApp") -> None:
    from tui.screens.study_stats import StudyStatsScreen

    app.push_screen(StudyStatsScreen())


# In the order a learner meets them: read, drill, compute, train, play.
AREAS: list[Area] = [
    Area("lessons", "Lessons", "l", "The course, chapter by chapter, with worked numbers", _open_lessons),
    Area("flashcards", "Flashcards", "f", "Spaced repetition on every interview term: reveal, rate 1-4",
         _open_flashcards),
    Area("quiz", "Quiz", "q", "Multiple choice, type the term, numbers, explain, chapter quizzes",
         _open_quiz),
    Area("stats", "Study stats", "s", "Due forecast, streak heatmap, retention, weakest cards",
         _open_study_stats),
    Area("attention", "Attention stepper", "a",
         "Every stage of self-attention with real numbers; maths explorers (o)", _open_attention),
    Area("training", "Training", "t", "Train a model in the background and watch its loss live",
         _open_training),
    Area("playground", "Playground", "p", "Generate names, steer them, step through one, compare models",
         _open_playground),
]


def area(area_id: str) -> Area:
    for a in AREAS:
        if a.id == area_id:
            return a
    raise KeyError(area_id)
