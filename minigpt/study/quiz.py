"""Quiz questions built from deck cards: multiple choice, type the term, numbers, explain.

Distractors come from the card's own known misconceptions (``[[card.distractors]]`` with a
"why it is wrong") and from sibling concepts (same ``group``, else same lesson, else any term).
Outcome → rating: wrong → Again (1); right with a typo or a hint → Hard (2); right → Good (3).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from minigpt.study import numeric
from minigpt.study.decks import Deck, StudyCard, load_decks
from minigpt.study.matching import MatchResult, match_answer


@dataclass(frozen=True)
class Option:
    text: str
    correct: bool
    why: str = ""                  # why this option is wrong (empty for the right one)


@dataclass
class QuizQuestion:
    card: StudyCard
    format: str                    # "choice" | "type" | "numeric" | "explain"
    prompt: str
    options: list[Option] = field(default_factory=list)

    @property
    def card_id(self) -> str:
        return self.card.id

    @property
    def answer_index(self) -> int | None:
        for i, o in enumerate(self.options):
            if o.correct:
                return i
        return None


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


def _siblings(deck: Deck, card: StudyCard) -> list[StudyCard]:
    terms = [c for c in deck if c.kind == "term" and c.term != card.term]
    for key in (lambda c: card.group and c.group == card.group, lambda c: c.lesson == card.lesson):
        near = [c for c in terms if key(c)]
        if len(near) >= 3:
            return near + [c for c in terms if c not in near]
    return terms


def choice_question(deck: Deck, card: StudyCard, rng: random.Random, k: int = 4) -> QuizQuestion:
    """A multiple-choice question with k options (one right) for a term, reverse or question card."""
    options: list[Option] = [Option(d.text, False, d.why) for d in card.distractors]
    rng.shuffle(options)
    options = options[:2]
    sibs = _siblings(deck, card)
    head, tail = sibs[:6], sibs[6:]
    rng.shuffle(head)
    sibs = head + tail
    if card.kind == "term":
        prompt, right = f"Which description fits “{card.term}”?", card.definition
        pool = [Option(s.definition, False, f"That describes {s.term}.") for s in sibs]
    elif card.kind == "reverse":
        prompt, right = f"Which term is this?\n{card.definition}", card.term
        pool = [Option(c, False, f"“{c}” is a different idea that is easy to confuse with "
                                  f"{card.term}.") for c in card.confusables]
        pool += [Option(s.term, False, f"{s.term}: {s.definition}") for s in sibs]
    elif card.kind == "question":
        prompt, right = card.front, card.back
        others = [c for c in deck if c.kind == "question" and c.id != card.id]
        others.sort(key=lambda c: (c.lesson != card.lesson, rng.random()))
        pool = [Option(c.back, False, f"That answers another question: {c.front}")
                for c in others]
    else:
        raise ValueError(f"card {card.id!r} ({card.kind}) cannot be a multiple-choice question")
    seen = {right.casefold()} | {o.text.casefold() for o in options}
    for o in pool:
        if len(options) >= k - 1:
            break
        if o.text.casefold() not in seen:
            options.append(o)
            seen.add(o.text.casefold())
    options.append(Option(right, True))
    rng.shuffle(options)
    return QuizQuestion(card, "choice", prompt, options)


def question_for(deck: Deck, card: StudyCard, rng: random.Random | None = None,
                 fmt: str | None = None) -> QuizQuestion:
    """Pick a suitable format for a card (or force one)."""
    rng = rng or random.Random()
    if fmt is None:
        fmt = {"term": "choice", "reverse": "type", "cloze": "type", "numeric": "numeric",
               "question": "choice" if len(card.distractors) >= 2 else "explain"}.get(card.kind,
                                                                                     "explain")
    if fmt == "choice":
        return choice_question(deck, card, rng)
    if fmt == "type":
        prompt = (f"Type the term:\n{card.definition}" if card.kind in ("reverse", "term")
                  else f"Fill the blank(s):\n{card.front}")
        return QuizQuestion(card, "type", prompt)
    if fmt == "numeric":
        return QuizQuestion(card, "numeric", card.numeric.prompt)
    return QuizQuestion(card, "explain", f"In your own words: {card.front}")


def answer_choice(q: QuizQuestion, index: int) -> QuizOutcome:
    picked = q.options[index]
    right = q.options[q.answer_index]
    if picked.correct:
        return QuizOutcome(True, 3, "Right.", right.text)
    return QuizOutcome(False, 1, "Not quite.", right.text, why=picked.why)


def answer_typed(q: QuizQuestion, text: str, *, hint: bool = False) -> QuizOutcome:
    """Type-the-term (or cloze blanks separated by '/' or ';' when there are several)."""
    card = q.card
    if card.kind == "cloze" and len(card.cloze_answers) > 1:
        parts = [p for p in text.replace(";", "/").split("/")]
        results = [match_answer(p, a) for p, a in zip(parts, card.cloze_answers)]
        ok = len(parts) == len(card.cloze_answers) and all(r.correct for r in results)
        typo = any(r.verdict == "typo" for r in results)
        return QuizOutcome(ok, outcome_rating(ok, typo=typo, hint=hint),
                           "Right." if ok else "Not quite.", card.expected)
    expected = card.term if card.kind in ("term", "reverse") else card.expected
    m = match_answer(text, expected, card.aliases, card.confusables)
    if m.confusable:
        fb = f"“{m.confusable}” is a different concept; the answer is {expected}."
    elif m.verdict == "typo":
        fb = f"Accepted with a typo: {m.matched}."
    else:
        fb = "Right." if m.correct else f"The answer is {expected}."
    return QuizOutcome(m.correct, outcome_rating(m.correct, typo=m.verdict == "typo", hint=hint),
                       fb, expected, match=m)


def answer_numeric(q: QuizQuestion, text: str, *, hint: bool = False) -> QuizOutcome:
    r = numeric.check(q.card.numeric, text)
    return QuizOutcome(r.correct, outcome_rating(r.correct, hint=hint), r.message,
                       q.card.numeric.answer_text, solution=r.solution)


def reveal(q: QuizQuestion) -> tuple[str, tuple[str, ...]]:
    """For explain-in-your-own-words: the model answer and the checklist to self-grade against."""
    return q.card.back, q.card.checklist


def self_grade(q: QuizQuestion, points_met: int) -> QuizOutcome:
    """All checklist points → Good; at least half → Hard; fewer → Again."""
    total = max(1, len(q.card.checklist))
    rating = 3 if points_met >= total else 2 if points_met * 2 >= total else 1
    return QuizOutcome(rating > 1, rating, f"{points_met}/{total} points", q.card.back,
                       solution=q.card.back)


def _concept(card: StudyCard) -> str:
    return card.id.split(":")[0]


def chapter_quiz(lesson_id: str, n: int = 5, seed: int | None = None, *,
                 deck: Deck | None = None) -> list[QuizQuestion]:
    """Up to n questions on distinct concepts from the cards tagged with this lesson."""
    deck = deck if deck is not None else load_decks()
    rng = random.Random(seed)
    cards = deck.by_lesson(lesson_id)
    if not cards:
        raise ValueError(f"no cards are tagged with lesson {lesson_id!r}")
    rng.shuffle(cards)
    chosen, seen = [], set()
    for card in cards:
        if _concept(card) not in seen:
            seen.add(_concept(card))
            chosen.append(card)
        if len(chosen) == n:
            break
    return [question_for(deck, c, rng) for c in chosen]
