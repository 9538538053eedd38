"""A card's scheduling row (``card_state``) written outside an answer: the first row of a card
that is suspended or buried before it was ever answered, and the row an undone answer restores.

``minigpt.study.review`` calls both inside its transaction; the answer itself (fsrs's next state)
is written there.
"""

from __future__ import annotations

import json
from datetime import datetime

from minigpt.study import scheduler


def ensure_row(conn, card_id: str, now: datetime) -> None:
    """Give a new card its row (fsrs's new state, unanswered); a card with a row keeps it."""
    card = scheduler.new_card(card_id, now)
    conn.execute(
        "INSERT OR IGNORE INTO card_state(card_id, fsrs_json, due, fsrs_state, updated_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (card_id, scheduler.card_to_json(card), scheduler.iso(card.due), int(card.state), scheduler.iso(now)))


def restore_row(conn, card_id: str, prev_json: str | None) -> None:
    """Put back the row an answer replaced (``prev_json``, None: the card had none)."""
    # What another window did to the card since the answer stays: a suspension, and a bury
    # (an answer clears buried_until, so one set now was made after it).
    current = conn.execute("SELECT suspended, buried_until FROM card_state WHERE card_id = ?",
                           (card_id,)).fetchone()
    conn.execute("DELETE FROM card_state WHERE card_id = ?", (card_id,))
    prev = json.loads(prev_json) if prev_json else None
    if prev is None:
        if current is not None and (current["suspended"] or current["buried_until"]):  # kept, unanswered
            ensure_row(conn, card_id, scheduler.utc_now())
            conn.execute("UPDATE card_state SET suspended = ?, buried_until = ? WHERE card_id = ?",
                         (current["suspended"], current["buried_until"], card_id))
        return
    if current is not None:
        prev["suspended"] = current["suspended"]
        if current["buried_until"]:
            prev["buried_until"] = current["buried_until"]
    cols = list(prev)
    conn.execute(f"INSERT INTO card_state({', '.join(cols)}) "
                 f"VALUES ({', '.join('?' for _ in cols)})", [prev[c] for c in cols])
