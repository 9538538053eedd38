"""The areas listed on the home screen, as data: each names the screen that opens it.

An area appears here only once its screen exists (no placeholders). To add one, append an
``Area`` naming a screen of ``tui.navigation.SCREENS``; the home screen, the command palette and
the help screen pick it up. ``PLACES`` are the screens inside areas that the command palette
reaches from anywhere by plain words (the plan, compare runs, seed groups, flagged cards…).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Area:
    id: str
    title: str
    key: str  # single key on the home screen
    description: str
    screen: str  # a name in tui.navigation.SCREENS


# In the order a learner meets them: read, drill, compute, train, play.
AREAS: list[Area] = [
    Area("lessons", "Lessons", "l", "The course, chapter by chapter, with worked numbers", "lessons"),
    Area("flashcards", "Flashcards", "f", "Spaced repetition on every interview term: reveal, rate 1-4",
         "flashcards"),
    Area("quiz", "Quiz", "q", "Multiple choice, type the term, numbers, explain, chapter quizzes", "quiz"),
    Area("interview", "Mock interview", "i",
         "A timed interview from the lessons you read, weakest first; a report and a trend", "interview"),
    Area("stats", "Study stats", "s", "Due forecast, streak heatmap, retention, weakest cards", "stats"),
    Area("katas", "Katas", "k", "Write softmax, attention, a KV-cache step… yourself; hidden tests grade it",
         "katas"),
    Area("attention", "Attention stepper", "a",
         "Every stage of self-attention with real numbers; maths explorers (o)", "attention"),
    Area("training", "Training", "t", "Train a model in the background and watch its loss live", "training"),
    Area("playground", "Playground", "p", "Generate names, steer them, step through one, compare models",
         "playground"),
    Area("experiments", "Experiments", "e",
         "The course's experiments as background sweeps: scaling law, dropout, positions, lr", "experiments"),
]


@dataclass(frozen=True)
class Place:
    """A screen inside an area, found in the command palette by its plain name."""

    title: str
    description: str
    screen: str  # a name in tui.navigation.SCREENS
    options: tuple[tuple[str, object], ...] = ()  # keyword arguments of the screen


PLACES: list[Place] = [
    Place("Interview plan", "Set the interview day and new cards a day; what to study each day", "study_plan"),
    Place("Flagged cards", "Cards you flagged as wrong: read and resolve them", "flagged_cards"),
    Place("Runs", "Every training run: open, watch, resume, stop", "runs"),
    Place("Compare runs", "Loss curves of your runs side by side", "compare_runs"),
    Place("Seed groups", "Runs trained with --seeds as bands; the first two compared", "compare_runs",
          (("groups", True),)),
    Place("Explorers", "The maths explorers, one key each", "explorer_menu"),
]


def area(area_id: str) -> Area:
    for a in AREAS:
        if a.id == area_id:
            return a
    raise KeyError(area_id)
