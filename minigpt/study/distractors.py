"""Which wrong options a multiple-choice question offers: related, of one kind, never right.

Distractors come from the card's own known misconceptions (``[[card.distractors]]`` with a
"why it is wrong") and from sibling concepts (same ``group``, else same lesson, else any term),
never from a concept the card declares ``related`` (its text would be a second right option),
never two that restate one idea, and only from terms of the card's own category.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from minigpt.study.cards import Deck, StudyCard
from minigpt.study.matching import normalize


@dataclass(frozen=True)
class Option:
    text: str
    correct: bool
    why: str = ""                  # why this option is wrong (empty for the right one)


def is_related(a: StudyCard, b: StudyCard) -> bool:
    """Either card declares the other's concept also right for it (``related`` in the deck)."""
    return a.note_id in b.related or b.note_id in a.related


def _siblings(deck: Deck, card: StudyCard) -> tuple[list[StudyCard], list[StudyCard]]:
    """(near, far) other terms: near = the same group, else the same lesson (when 3 or more).

    Only terms of the card's own category (no paper title among concepts), and never a related
    concept: its definition would be a second right option.
    """
    terms = [c for c in deck if c.kind == "term" and c.note_id != card.note_id
             and c.category == card.category and not is_related(c, card)]
    for key in (lambda c: card.group and c.group == card.group, lambda c: c.lesson == card.lesson):
        near = [c for c in terms if key(c)]
        if len(near) >= 3:
            return near, [c for c in terms if c not in near]
    same_lesson = [c for c in terms if c.lesson == card.lesson]
    return same_lesson, [c for c in terms if c not in same_lesson]


_STOP = frozenset("the and for with its that this from are into one each than not but".split())


def content_words(text: str) -> set[str]:
    """The words of a sentence that carry its meaning (normalised, short and common ones out)."""
    return {w for w in normalize(text).split() if len(w) > 2 and w not in _STOP}


def restates(a: str, b: str) -> bool:
    """Two options that say the same thing: most words of the shorter one are in the other."""
    wa, wb = content_words(a), content_words(b)
    if not wa or not wb:
        return normalize(a) == normalize(b)
    return len(wa & wb) >= 0.7 * min(len(wa), len(wb))


def _length_gap(text: str, right: str) -> float:
    return abs(math.log(max(1, len(text)) / max(1, len(right))))


FAR_PENALTY = 0.6   # a sibling from elsewhere must be this much closer in log-length to be chosen


def _pick_distractors(own: list[Option], near: list[Option], far: list[Option], right: str,
                      need: int, rng: random.Random) -> list[Option]:
    """Up to ``need`` wrong options, related to the question and close to the right one in length.

    One known misconception always comes first (a second one if its length is comparable); then
    siblings of the same group or lesson, then other terms, each ranked by how close its length
    is to the right option's. If the right option would still be the longest, the shortest
    sibling picked is swapped for a longer candidate, so "pick the longest" never works.
    """
    seen = {right.casefold()}
    chosen: list[Option] = []

    def take(o: Option) -> None:
        # Two wrong options never restate one idea (a misconception and a sibling's definition).
        if (o.text.casefold() not in seen and len(chosen) < need
                and not any(restates(o.text, c.text) for c in chosen)):
            chosen.append(o)
            seen.add(o.text.casefold())

    ranked = sorted(own, key=lambda o: (_length_gap(o.text, right), rng.random()))
    for i, o in enumerate(ranked[:2]):
        if i == 0 or _length_gap(o.text, right) <= math.log(2.5):
            take(o)
    # The topic's neighbourhood first (own misconceptions, the group or lesson), each ranked by
    # length; terms from elsewhere only when the neighbourhood cannot fill the question.
    rest = [(0.0, o) for o in own + near] + [(FAR_PENALTY, o) for o in far]
    rest = [(p, o) for p, o in rest if o.text.casefold() not in seen]
    rest.sort(key=lambda po: (po[0] > 0 and len(own) + len(near) >= need,
                              round(_length_gap(po[1].text, right) + po[0], 1), rng.random()))
    for _, o in rest:
        take(o)
    swappable = [o for o in chosen if o is not chosen[0] or not ranked]
    if swappable and all(len(o.text) < len(right) for o in chosen):
        shortest = min(swappable, key=lambda o: len(o.text))
        kept = [o for o in chosen if o is not shortest]
        longer = [(p, o) for p, o in rest
                  if o not in chosen and len(right) <= len(o.text) <= 2.5 * len(right)
                  and not any(restates(o.text, k.text) for k in kept)]
        if any(p == 0 for p, _ in longer):  # a related one if there is one
            longer = [(p, o) for p, o in longer if p == 0]
        if longer and (longer[0][0] == 0 or len(own) + len(near) < need):
            chosen[chosen.index(shortest)] = min(longer, key=lambda po: (po[0], len(po[1].text)))[1]
    return chosen
