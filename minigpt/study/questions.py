"""One quiz question, format by format: which cards suit it, how it is built and how it is graded.

Each function here is named by one entry of ``minigpt.study.formats.QUIZ_MODES``; nothing here
chooses between formats (the registry does, for the quiz, the repair and the interviews).

Rules every question keeps (tests/test_content_rules.py checks them over the whole deck):
- the options of one question are of one kind: all definitions, all terms or all sentences
  written for that question, and the distractors are picked close in length to the right
  option, so that length never gives the answer away;
- "type the term" is only asked for terms; a blank or card whose answer is a number is asked
  as a number and compared by value (``minigpt.study.numeric``), so 1/5, 0.2 and 2e-1 agree.

Wrong options are picked in ``minigpt.study.distractors`` (the card's own misconceptions, then
sibling concepts; never a related concept, never two that restate one idea).
Outcome → rating: wrong → Again (1); right with a typo or a hint → Hard (2); right → Good (3).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from minigpt.study import numeric
from minigpt.study.cards import Deck, StudyCard
from minigpt.study.distractors import Option, _pick_distractors, _siblings, is_related
from minigpt.study.matching import MatchResult, match_answer
from minigpt.study.templates import fresh


@dataclass
class QuizQuestion:
    card: StudyCard
    format: str                    # one of FORMATS
    prompt: str
    options: list[Option] = field(default_factory=list)
    note: str = ""                 # e.g. the tolerance a numeric answer is checked with
    rivals: tuple[str, ...] = ()   # other concepts' names: never accepted as a typo of this one

    @property
    def card_id(self) -> str:
        return self.card.id

    @property
    def answer_index(self) -> int | None:
        for i, o in enumerate(self.options):
            if o.correct:
                return i
        return None

    @property
    def right_answer(self) -> str:
        """The answer in words, for feedback and the end-of-quiz list of misses."""
        if self.options:
            return self.options[self.answer_index].text
        if self.card.kind in ("term", "reverse"):
            return self.card.term
        if self.card.kind == "question":
            return self.card.short or self.card.back
        return self.card.expected


@dataclass(frozen=True)
class QuizOutcome:
    correct: bool
    rating: int                    # 1 Again, 2 Hard, 3 Good: feed to StudySession.rate(mode="quiz")
    feedback: str
    expected: str
    why: str = ""                  # for a wrong choice: why it is wrong
    match: MatchResult | None = None
    solution: str = ""             # numeric worked breakdown / model answer


def outcome_rating(correct: bool, *, typo: bool = False, hint: bool = False) -> int:
    if not correct:
        return 1
    return 2 if (typo or hint) else 3


# -- which cards suit which format ---------------------------------------------------------------
def asks_a_number(card: StudyCard) -> bool:
    """A card whose answer is a number is asked as a number only."""
    return card.kind == "numeric" or bool(card.numeric_blanks)


def can_choose(card: StudyCard) -> bool:
    """A paper's title is typed, not chosen: its options would be concepts' names."""
    return card.kind == "term" or (card.kind == "reverse" and card.category == "concept") or (
        card.kind == "question" and bool(card.short) and len(card.distractors) >= 2)


def suits_choice(card: StudyCard) -> bool:
    return not asks_a_number(card) and can_choose(card)


def suits_typing(card: StudyCard) -> bool:
    return not asks_a_number(card) and card.kind in ("reverse", "cloze")


def suits_explaining(card: StudyCard) -> bool:
    return not asks_a_number(card) and card.kind not in ("term", "reverse", "cloze")


# -- multiple choice ----------------------------------------------------------------------------
def choice_question(deck: Deck, card: StudyCard, rng: random.Random, k: int = 4) -> QuizQuestion:
    """A multiple-choice question with up to k options (one right) whose options are one kind."""
    own = [Option(d.text, False, d.why) for d in card.distractors]
    near, far = _siblings(deck, card) if card.kind in ("term", "reverse") else ([], [])
    if card.kind == "term":
        prompt, right = f"Which description fits “{card.term}”?", card.definition
        near, far = ([Option(s.definition, False, f"That describes {s.term}.") for s in group]
                     for group in (near, far))
    elif card.kind == "reverse":
        prompt, right = f"Which term is described here?\n{card.definition}", card.term
        known = {c.term.casefold(): c for c in deck if c.kind == "term"
                 and c.category == card.category and not is_related(c, card)}
        own = [Option(known[c.casefold()].term, False,
                      f"{known[c.casefold()].term} is a different idea: "
                      f"{known[c.casefold()].definition}")
               for c in card.confusables if c.casefold() in known]
        near, far = ([Option(s.term, False, f"{s.term}: {s.definition}") for s in group]
                     for group in (near, far))
    elif card.kind == "question" and can_choose(card):
        prompt, right = card.front, card.short
    else:
        raise ValueError(f"card {card.id!r} ({card.kind}) cannot be a multiple-choice question")
    options = _pick_distractors(own, near, far, right, k - 1, rng)
    options.append(Option(right, True))
    rng.shuffle(options)
    return QuizQuestion(card, "choice", prompt, options)


def answer_choice(q: QuizQuestion, index: int) -> QuizOutcome:
    picked = q.options[index]
    right = q.options[q.answer_index]
    if picked.correct:
        return QuizOutcome(True, 3, "Right.", right.text)
    return QuizOutcome(False, 1, "Not quite.", right.text, why=picked.why)


# -- type the term (or fill a cloze's blanks) -----------------------------------------------------
def typed_question(deck: Deck, card: StudyCard, rng: random.Random) -> QuizQuestion:
    prompt = (f"Type the term:\n{card.definition}" if card.kind == "reverse"
              else f"Fill the blank{'s' * (len(card.cloze_answers) > 1)}:\n{card.front}")
    return QuizQuestion(card, "type", prompt, rivals=rival_names(deck, card))


def concept_names(card: StudyCard) -> tuple[str, ...]:
    """Every name a term card accepts for its concept: the term and its aliases."""
    return (card.term, *card.aliases) if card.kind in ("term", "reverse") else ()


def rival_names(deck: Deck, card: StudyCard) -> tuple[str, ...]:
    """The names of the deck's other concepts (not this card's note, not a related card's)."""
    mine = {card.note_id} | set(card.related)
    out: dict[str, None] = {}
    for other in deck:
        if other.kind == "term" and other.note_id not in mine and card.id not in other.related:
            out.update(dict.fromkeys(concept_names(other)))
    return tuple(out)


def answer_typed(q: QuizQuestion, text: str, *, hint: bool = False) -> QuizOutcome:
    """Type-the-term (or cloze blanks separated by '/' or ';' when there are several)."""
    card = q.card
    if card.kind == "cloze" and len(card.cloze_answers) > 1:
        parts = [p for p in text.replace(";", "/").split("/")]
        aliases = card.blank_aliases or ((),) * len(card.cloze_answers)
        results = [match_answer(p, a, al, rivals=q.rivals)
                   for p, a, al in zip(parts, card.cloze_answers, aliases)]
        ok = len(parts) == len(card.cloze_answers) and all(r.correct for r in results)
        typo = any(r.verdict == "typo" for r in results)
        return QuizOutcome(ok, outcome_rating(ok, typo=typo, hint=hint),
                           "Right." if ok else "Not quite.", card.expected)
    expected = card.term if card.kind in ("term", "reverse") else card.expected
    m = match_answer(text, expected, card.aliases, card.confusables, rivals=q.rivals)
    if m.confusable:
        fb = f"“{m.confusable}” is a different concept; the answer is {expected}."
    elif m.verdict == "typo":
        fb = f"Accepted with a typo: {m.matched}."
    else:
        fb = "Right." if m.correct else f"The answer is {expected}."
    return QuizOutcome(m.correct, outcome_rating(m.correct, typo=m.verdict == "typo", hint=hint),
                       fb, expected, match=m)


def regrade_typed(q: QuizQuestion, text: str) -> bool:
    """Would today's grader accept this logged typed answer?"""
    return answer_typed(q, text).correct


# -- numbers --------------------------------------------------------------------------------------
def numeric_note(card: StudyCard) -> str:
    if card.kind == "numeric":
        return card.numeric.tolerance_note
    value = numeric.parse_number(card.cloze_answers[0])
    return numeric.tolerance_text(card.tolerance, card.abs_tolerance, value)


def numeric_question(deck: Deck, card: StudyCard, rng: random.Random) -> QuizQuestion:
    card = fresh(card, rng)  # a generative card: new inputs at every asking
    note = numeric_note(card)
    text = card.numeric.prompt if card.kind == "numeric" else f"Fill in the number:\n{card.front}"
    return QuizQuestion(card, "numeric", text, note=note)


def answer_numeric(q: QuizQuestion, text: str, *, hint: bool = False) -> QuizOutcome:
    """A number (or shape) compared by value within the tolerance the question states."""
    card = q.card
    if card.kind == "numeric":
        r = numeric.check(card.numeric, text)
        return QuizOutcome(r.correct, outcome_rating(r.correct, hint=hint), r.message,
                           card.numeric.answer_text, solution=r.solution)
    parts = text.split(";") if len(card.cloze_answers) > 1 else [text]
    try:
        got = [numeric.parse_number(p) for p in parts]
    except ValueError as e:
        return QuizOutcome(False, 1, str(e), card.expected, solution=card.back)
    ok = len(got) == len(card.cloze_answers) and all(
        numeric.values_agree(g, numeric.parse_number(a), card.tolerance, card.abs_tolerance)
        for g, a in zip(got, card.cloze_answers))
    message = "right" if ok else f"expected {card.expected} ({q.note})"
    return QuizOutcome(ok, outcome_rating(ok, hint=hint), message, card.expected,
                       solution=card.back)


def unreadable_number(q: QuizQuestion, text: str) -> str | None:
    """Why a typed number cannot be read (a typing problem, not a wrong answer), or None."""
    card = q.card
    try:
        if card.kind == "numeric" and card.numeric.is_shape:
            numeric.parse_shape(text)
        else:
            parts = text.split(";") if card.kind == "cloze" and len(card.cloze_answers) > 1 else [text]
            for p in parts:
                numeric.parse_number(p)
    except ValueError as e:
        return str(e)
    return None


def regrade_numeric(q: QuizQuestion, text: str) -> bool:
    """Would today's grader accept this logged number? (One it cannot read stays wrong.)"""
    return unreadable_number(q, text) is None and answer_numeric(q, text).correct


# -- explain in your own words --------------------------------------------------------------------
def explain_question(deck: Deck, card: StudyCard, rng: random.Random) -> QuizQuestion:
    return QuizQuestion(card, "explain", f"In your own words: {card.front}")


def reveal(q: QuizQuestion) -> tuple[str, tuple[str, ...]]:
    """For explain-in-your-own-words: the model answer and the checklist to self-grade against."""
    return q.card.back, q.card.checklist


def self_grade(q: QuizQuestion, points_met: int) -> QuizOutcome:
    """All checklist points → Good; at least half → Hard; fewer → Again."""
    total = max(1, len(q.card.checklist))
    rating = 3 if points_met >= total else 2 if points_met * 2 >= total else 1
    return QuizOutcome(rating > 1, rating, f"{points_met}/{total} points", q.card.back,
                       solution=q.card.back)
