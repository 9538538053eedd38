"""The one registry of quiz modes and rating names (torch-free, fsrs-free: the app reads it too).

A quiz *format* is how one question is asked (choose an option, type the term, type a number,
explain in your own words); a quiz *mode* is what a round draws from: one format, or a chapter
quiz that mixes them. Each mode is one ``QuizMode`` entry here, carrying its words and, for a
format, what it does: which cards suit it, how a question is built and graded, and how a logged
answer is re-graded. Those functions live in ``minigpt.study.questions``. The quiz
(``minigpt.study.quiz``), the repair of old grades (``minigpt.study.repair``) and the interviews
dispatch through this table; the picker, the header, the review-log mode names and the stats read
it; the app's widget for each format is keyed by the same ids (``tui/study/study_quiz.py``
``VIEWS``, a test checks every format has one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from minigpt.study import questions
from minigpt.study.cards import StudyCard
from minigpt.study.questions import QuizOutcome, QuizQuestion

# FSRS's four answers, by the number the learner presses.
RATING_NAMES: dict[int, str] = {1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}


@dataclass(frozen=True)
class QuizMode:
    id: str
    title: str          # the picker's line and the round's header
    asking: str         # a few words for the header while a question waits for its answer
    description: str    # one line under the title in the picker
    # A format's behaviour; a mode that mixes formats (the chapter quiz) has none of its own.
    suits: Callable[[StudyCard], bool] | None = None          # can this card be asked so?
    build: Callable[..., QuizQuestion] | None = None          # (deck, card, rng) → a question
    grade: Callable[..., QuizOutcome] | None = None           # (question, answer, …) → outcome
    regrade: Callable[[QuizQuestion, str], bool] | None = None  # a logged typed answer right now?
    unreadable: Callable[[QuizQuestion, str], str | None] | None = None  # why typed text can't be read
    rank: int = 0       # of the formats a card suits, the lowest is asked when none is chosen

    @property
    def is_format(self) -> bool:
        """False: a mode that mixes formats (the chapter quiz)."""
        return self.build is not None

    @property
    def log_mode(self) -> str:
        """The review log's ``mode`` for answers given in this mode."""
        return f"quiz:{self.id}"


QUIZ_MODES: dict[str, QuizMode] = {m.id: m for m in (
    QuizMode("choice", "Multiple choice", "choose",
             "Pick the one right option among four; each wrong one says why.",
             suits=questions.suits_choice, build=questions.choice_question, grade=questions.answer_choice, rank=1),
    QuizMode("type", "Type the term", "type it",
             "Read a definition or a gapped sentence and type the missing term.",
             suits=questions.suits_typing, build=questions.typed_question, grade=questions.answer_typed,
             regrade=questions.regrade_typed, rank=0),
    QuizMode("numeric", "Numbers", "a number",
             "Work a number out as the lessons do, within the stated tolerance.",
             suits=questions.asks_a_number, build=questions.numeric_question, grade=questions.answer_numeric,
             regrade=questions.regrade_numeric, unreadable=questions.unreadable_number, rank=0),
    QuizMode("explain", "Explain in your own words", "explain",
             "Write an answer, then tick the points of the model answer you made.",
             suits=questions.suits_explaining, build=questions.explain_question, grade=questions.self_grade, rank=2),
    QuizMode("chapter", "Chapter quiz", "chapter",
             "Up to eight questions on one lesson, mixed formats, one per fact."),
)}

FORMATS: tuple[str, ...] = tuple(m.id for m in QUIZ_MODES.values() if m.is_format)
LOG_MODES: tuple[str, ...] = tuple(m.log_mode for m in QUIZ_MODES.values())

