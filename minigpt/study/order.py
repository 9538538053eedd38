"""The order cards are studied in: new cards by lesson, siblings kept apart.

Pure functions over card ids, so the queue (``minigpt.study.review``) and the tests share them.
"""

from __future__ import annotations

from collections.abc import Callable

from minigpt.study.cards import Deck

# Within one lesson: a term before its reverse, then blanks, numbers and open questions.
KIND_ORDER = {"term": 0, "reverse": 1, "cloze": 2, "numeric": 3, "question": 4, "user": 5}


def new_card_order(deck: Deck, card_ids: list[str], lesson_order: dict[str, int], *,
                   only_lessons: set[str] | None = None) -> list[str]:
    """New cards in the order the lessons teach them; cards of no lesson (imports) come last.

    ``only_lessons`` (the lessons read so far, when the learner asked for that) drops the new
    cards of every other lesson; imported cards, which belong to no lesson, always stay.
    """
    position = {cid: i for i, cid in enumerate(deck.cards)}
    rank: dict[str, int] = {}          # 0 for a note's first card, 1 for its second, ...
    seen: dict[str, int] = {}
    for cid, card in deck.cards.items():
        rank[cid] = seen.get(card.note_id, 0)
        seen[card.note_id] = rank[cid] + 1

    def key(cid: str):
        card = deck[cid]
        # Siblings are spread out: every note's first card of a lesson before any second one.
        return (lesson_order.get(card.lesson, 10**9), rank[cid], KIND_ORDER.get(card.kind, 9),
                position[cid])

    ids = sorted(card_ids, key=key)
    if only_lessons is not None:
        ids = [c for c in ids if deck[c].lesson in only_lessons or deck[c].lesson not in lesson_order]
    return ids


def space_siblings(card_ids: list[str], note_of: Callable[[str], str],
                   after: str | None = None) -> list[str]:
    """Reorder as little as possible so that no card follows a sibling (same note).

    ``after`` is the card shown just before the list starts. Where only siblings are left, they
    keep their order: better back to back than not at all.
    """
    rest = list(card_ids)
    out: list[str] = []
    prev = note_of(after) if after else None
    while rest:
        pick = next((i for i, c in enumerate(rest) if note_of(c) != prev), 0)
        card = rest.pop(pick)
        out.append(card)
        prev = note_of(card)
    return out
