"""The one registry of quiz modes and rating names (torch-free, fsrs-free: the app reads it too).

A quiz *format* is how one question is asked (choose an option, type the term, type a number,
explain in your own words); a quiz *mode* is what a round draws from: one format, or a chapter
quiz that mixes them. Adding a format is one ``QuizMode`` entry here plus its widget in
``tui/widgets/study_quiz.py`` (``VIEWS``) and its question builder in ``minigpt.study.quiz``;
the picker, the header, the review-log mode names and the stats all read this table.
"""

from __future__ import annotations

from dataclasses import dataclass

# FSRS's four answers, by the number the learner presses.
RATING_NAMES: dict[int, str] = {1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}


@dataclass(frozen=True)
class QuizMode:
    id: str
    title: str          # the picker's line and the round's header
    asking: str         # a few words for the header while a question waits for its answer
    description: str    # one line under the title in the picker
    is_format: bool = True   # False: a mode that mixes formats (the chapter quiz)

    @property
    def log_mode(self) -> str:
        """The review log's ``mode`` for answers given in this mode."""
        return f"quiz:{self.id}"


QUIZ_MODES: dict[str, QuizMode] = {m.id: m for m in (
    QuizMode("choice", "Multiple choice", "choose",
             "Pick the one right option among four; each wrong one says why."),
    QuizMode("type", "Type the term", "type it",
             "Read a definition or a gapped sentence and type the missing term."),
    QuizMode("numeric", "Numbers", "a number",
             "Work a number out as the lessons do, within the stated tolerance."),
    QuizMode("explain", "Explain in your own words", "explain",
             "Write an answer, then tick the points of the model answer you made."),
    QuizMode("chapter", "Chapter quiz", "chapter",
             "Up to eight questions on one lesson, mixed formats, one per fact.", is_format=False),
)}

FORMATS: tuple[str, ...] = tuple(m.id for m in QUIZ_MODES.values() if m.is_format)
LOG_MODES: tuple[str, ...] = tuple(m.log_mode for m in QUIZ_MODES.values())
