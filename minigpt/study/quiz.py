"""Quiz questions built from deck cards: multiple choice, type the term, numbers, explain.

Which formats suit a card, and each format's building and grading, are its entry in
``minigpt.study.formats.QUIZ_MODES`` (the functions are in ``minigpt.study.questions``, whose
names this module re-exports as the quiz's API); this module dispatches through that table and
draws a chapter quiz. A chapter quiz asks about distinct notes (no fact twice) in at least two
formats (tests/test_content_rules.py checks it over the whole deck).
"""

from __future__ import annotations

import random

from minigpt.study.cards import Deck, StudyCard
from minigpt.study.decks import cached_decks
from minigpt.study.distractors import (  # noqa: F401 (re-exported)
    Option,
    _pick_distractors,
    _siblings,
    content_words,
    is_related,
    restates,
)
from minigpt.study.formats import FORMATS, QUIZ_MODES  # noqa: F401 (FORMATS: re-export)
from minigpt.study.questions import (  # noqa: F401 (re-exported: the quiz's API)
    QuizOutcome,
    QuizQuestion,
    answer_choice,
    answer_numeric,
    answer_typed,
    can_choose,
    choice_question,
    concept_names,
    numeric_note,
    outcome_rating,
    reveal,
    rival_names,
    self_grade,
)

CHAPTER_QUIZ_SIZE = 8          # questions in a chapter quiz when the lesson has that many notes
CHAPTER_QUIZ_MIN = 6           # every lesson must offer at least this many (a test enforces it)


def formats_for(card: StudyCard) -> tuple[str, ...]:
    """Every format that suits the card, the one it is asked in by default first: what mode
    pickers and chapter quizzes draw from."""
    suited = [m for m in QUIZ_MODES.values() if m.is_format and m.suits(card)]
    return tuple(m.id for m in sorted(suited, key=lambda m: m.rank))


def default_format(card: StudyCard) -> str:
    """The format a card is asked in when nothing forces one."""
    return formats_for(card)[0]


def question_for(deck: Deck, card: StudyCard, rng: random.Random | None = None,
                 fmt: str | None = None) -> QuizQuestion:
    """A question for a card in its default format (or a forced one that suits it)."""
    rng = rng or random.Random()
    fmt = fmt or default_format(card)
    if fmt not in formats_for(card):
        raise ValueError(f"card {card.id!r} ({card.kind}) cannot be asked as {fmt!r}")
    return QUIZ_MODES[fmt].build(deck, card, rng)


def check_readable(q: QuizQuestion, text: str) -> str | None:
    """Why a typed answer cannot be read (a typing problem, not a wrong answer), or None."""
    unreadable = QUIZ_MODES[q.format].unreadable
    return unreadable(q, text) if unreadable is not None else None


# -- chapter quiz -------------------------------------------------------------------------------
def chapter_notes(deck: Deck, lesson_id: str) -> dict[str, list[StudyCard]]:
    """The lesson's cards grouped by note (one fact each), in deck order."""
    notes: dict[str, list[StudyCard]] = {}
    for card in deck.by_lesson(lesson_id):
        notes.setdefault(card.note_id, []).append(card)
    return notes


def chapter_quiz(lesson_id: str, n: int = CHAPTER_QUIZ_SIZE, seed: int | None = None, *,
                 deck: Deck | None = None, run_questions: list | None = None) -> list[QuizQuestion]:
    """Up to n questions on distinct notes of one lesson, in at least two formats when possible;
    one of them, when the learner's runs give some for this lesson (``run_questions``:
    :class:`minigpt.study.run_questions.RunQuestion`), about their own run, explained in their words."""
    deck = deck if deck is not None else cached_decks()
    rng = random.Random(seed)
    notes = list(chapter_notes(deck, lesson_id).values())
    if not notes:
        raise ValueError(f"no cards belong to this lesson ({lesson_id}) yet")
    rng.shuffle(notes)
    picked = []
    for cards in notes[:n]:
        options = [(c, f) for c in cards for f in formats_for(c)]
        picked.append(rng.choice(options))
    if len({f for _, f in picked}) < 2:
        _diversify(picked, notes, n, rng)
    questions = [question_for(deck, c, rng, fmt=f) for c, f in picked]
    mine = [r for r in run_questions or () if r.lesson == lesson_id]
    if mine:
        from minigpt.study.run_questions import as_card

        pick = rng.choice(mine)
        own = QuizQuestion(as_card(pick), "explain", f"About your own run: {pick.prompt}")
        questions = questions[:n - 1] + [own] if len(questions) >= n else questions + [own]
    return questions


def _diversify(picked: list, notes: list[list[StudyCard]], n: int, rng: random.Random) -> None:
    """Swap one question to another format (or another note) so a quiz mixes formats."""
    used = picked[0][1]
    for i, cards in enumerate(notes[:n]):
        other = [(c, f) for c in cards for f in formats_for(c) if f != used]
        if other:
            picked[i] = rng.choice(other)
            return
    for cards in notes[n:]:
        other = [(c, f) for c in cards for f in formats_for(c) if f != used]
        if other:
            picked[-1] = rng.choice(other)
            return
