"""A flashcard as the study code sees it (``StudyCard``: its kind, front, back and what grading
needs), a ``Deck`` of them by id, and cloze text rendered with its blanks hidden or shown.

``minigpt.study.decks`` reads the deck files into these; the schema is described there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minigpt.errors import DeckError

KINDS = ("term", "reverse", "question", "cloze", "numeric", "user")
CATEGORIES = ("concept", "paper")
CLOZE_RE = re.compile(r"\{\{c(\d+)::(.*?)(?:::(.*?))?\}\}")
ID_RE = re.compile(r"^[a-z0-9][a-z0-9._:-]*$")


@dataclass(frozen=True)
class Distractor:
    text: str
    why: str


@dataclass
class StudyCard:
    id: str
    kind: str                 # one of KINDS
    lesson: str
    front: str                # what the learner sees
    back: str                 # the answer shown after
    tags: tuple[str, ...] = ()
    term: str = ""            # the concept's name (term / reverse cards)
    definition: str = ""
    aliases: tuple[str, ...] = ()
    confusables: tuple[str, ...] = ()
    group: str = ""
    distractors: tuple[Distractor, ...] = ()
    checklist: tuple[str, ...] = ()
    cloze_answers: tuple[str, ...] = ()
    numeric: Any = None       # minigpt.study.numeric.NumericItem for numeric cards
    source: str = ""          # file the card came from
    note: str = ""            # sibling group; empty means the card stands alone
    short: str = ""           # question cards: a one-sentence right answer for multiple choice
    blank_aliases: tuple[tuple[str, ...], ...] = ()  # cloze: other accepted words, per blank
    related: tuple[str, ...] = ()  # ids of cards whose concept is also right for this one
    rubric_keys: tuple[tuple[str, ...], ...] = ()  # question cards: accepted phrases per checklist point
    category: str = "concept"  # what a term names: "concept" or "paper"; options stay in one
    tolerance: float = 0.0    # numeric cloze blanks: relative tolerance
    abs_tolerance: float = 0.0  # numeric cloze blanks: absolute tolerance
    template: str = ""        # generative numeric cards: the generator whose inputs each review draws

    @property
    def note_id(self) -> str:
        """Cards with the same note id are siblings: one fact asked in several ways."""
        return self.note or self.id

    @property
    def numeric_blanks(self) -> bool:
        """A cloze whose blanks are numbers: graded by value, asked with the numbers."""
        from minigpt.numbers import is_number

        return self.kind == "cloze" and all(is_number(a) for a in self.cloze_answers)

    @property
    def expected(self) -> str:
        """The text a learner would type for this card (term, cloze blanks, number)."""
        if self.kind == "reverse":
            return self.term
        if self.kind == "cloze":  # numbers are typed apart with ";" ("1/4" is a number)
            return ("; " if self.numeric_blanks else " / ").join(self.cloze_answers)
        if self.kind == "numeric":
            return self.numeric.answer_text
        return self.back


@dataclass
class Deck:
    cards: dict[str, StudyCard] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    def __iter__(self):
        return iter(self.cards.values())

    def __len__(self) -> int:
        return len(self.cards)

    def __getitem__(self, card_id: str) -> StudyCard:
        return self.cards[card_id]

    def get(self, card_id: str) -> StudyCard | None:
        return self.cards.get(card_id)

    def by_lesson(self, lesson_id: str) -> list[StudyCard]:
        return [c for c in self.cards.values() if c.lesson == lesson_id]

    def lessons(self) -> set[str]:
        return {c.lesson for c in self.cards.values()}

    def without(self, card_ids: set[str]) -> Deck:
        """The deck less these cards (the files it came from are the same)."""
        return Deck({k: c for k, c in self.cards.items() if k not in card_ids}, self.files)

    def add(self, card: StudyCard) -> None:
        if card.id in self.cards:
            other = self.cards[card.id].source
            raise DeckError(f"{card.source}: card {card.id!r}: duplicate id (also in {other})")
        self.cards[card.id] = card


def cloze_render(text: str, reveal: bool = False) -> str:
    """Show a cloze text with blanks as ``[...]`` (or ``[hint]``), or with the answers revealed."""
    def repl(m: re.Match) -> str:
        if reveal:
            return m.group(2)
        return f"[{m.group(3)}]" if m.group(3) else "[...]"
    return CLOZE_RE.sub(repl, text)
