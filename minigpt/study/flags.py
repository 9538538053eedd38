""""This question is wrong": a learner flags a card, with an optional note, until it is reviewed.

A flagged card leaves the scores until its flag is resolved, and ``minigpt cards --flagged`` lists
it (and writes a Markdown report) for whoever fixes the deck. Flags live in the progress database
(table ``card_flag``, migration 3).

:func:`left_out` is the one notion of a card taken out: flagged (until resolved) or suspended. Every
place that asks or counts cards reads it: the study queue and cram, chapter and format quizzes
(their generative draws included), mock interviews, readiness and the plan to an interview day.
"""

from __future__ import annotations

from dataclasses import dataclass

from minigpt.store import Store, _utc_now

MAX_NOTE_CHARS = 2000


@dataclass(frozen=True)
class Flag:
    card_id: str
    note: str
    flagged_at: str
    resolved_at: str | None = None

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None


def flag_card(store: Store, card_id: str, note: str = "") -> Flag:
    """Flag a card (again: the note is replaced and the flag reopened)."""
    note = " ".join(note.split())[:MAX_NOTE_CHARS]
    stamp = _utc_now()
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO card_flag(card_id, note, flagged_at, resolved_at) VALUES (?, ?, ?, NULL) "
            "ON CONFLICT(card_id) DO UPDATE SET note = excluded.note, "
            "flagged_at = excluded.flagged_at, resolved_at = NULL", (card_id, note, stamp))
    return Flag(card_id, note, stamp)


def resolve_flag(store: Store, card_id: str) -> bool:
    """Mark a flag reviewed: the card counts again. False when it had no open flag."""
    with store.transaction() as conn:
        cur = conn.execute("UPDATE card_flag SET resolved_at = ? WHERE card_id = ? "
                           "AND resolved_at IS NULL", (_utc_now(), card_id))
    return cur.rowcount > 0


def flags(store: Store, *, open_only: bool = True) -> list[Flag]:
    sql = "SELECT * FROM card_flag" + (" WHERE resolved_at IS NULL" if open_only else "")
    rows = store.conn.execute(sql + " ORDER BY flagged_at, card_id")
    return [Flag(r["card_id"], r["note"], r["flagged_at"], r["resolved_at"]) for r in rows]


def flagged_ids(store: Store) -> set[str]:
    """Cards with an open flag: left out of queues and scores."""
    return {r[0] for r in store.conn.execute(
        "SELECT card_id FROM card_flag WHERE resolved_at IS NULL")}


def left_out(store: Store) -> set[str]:
    """Cards no question, queue or score may use: an open flag ("this question is wrong") or a
    suspension. Resolving the flag or unsuspending the card brings it back everywhere at once."""
    return flagged_ids(store) | {r[0] for r in store.conn.execute(
        "SELECT card_id FROM card_state WHERE suspended = 1")}


def markdown_report(found: list[Flag], deck) -> str:
    """The flagged cards as Markdown: what the learner saw, the answer, the note, the file."""
    lines = ["# Flagged cards", "", f"{len(found)} card{'s' * (len(found) != 1)} flagged as wrong.", ""]
    for f in found:
        card = deck.get(f.card_id) if deck is not None else None
        lines.append(f"## {f.card_id}")
        lines.append("")
        if card is not None:
            lines += [f"- Lesson: {card.lesson}", f"- File: {card.source}",
                      f"- Question: {' '.join(card.front.split())}",
                      f"- Answer: {' '.join(card.back.split())}"]
        else:
            lines.append("- (no longer in the decks)")
        lines.append(f"- Flagged: {f.flagged_at}")
        lines.append(f"- Note: {f.note or '(none)'}")
        lines.append("")
    return "\n".join(lines)
