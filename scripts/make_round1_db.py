"""Write tests/fixtures/round1/progress.sqlite3: a progress database as round-1 code writes it.

Run once, with the code of the commit that added the fixture, so the file stays what an early
learner has on disk; tests/hostile/test_database.py opens it with the current code (migrations).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from minigpt.store import Store
from minigpt.study.anki import import_file
from minigpt.study.decks import load_decks
from minigpt.study.review import StudySession

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "round1" / "progress.sqlite3"


def main() -> None:
    if OUT.exists():
        sys.exit(f"{OUT} exists; the fixture is written once")
    store = Store(OUT)
    store.set_setting("theme", "textual-light")
    store.save_lesson_position("why-transformers", 1.0, reached_end=True)
    store.save_lesson_position("query-key-value", 0.4)
    deck = load_decks()
    session = StudySession(store, deck)
    now = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
    for card_id, rating in zip(sorted(deck.cards)[:3], (3, 1, 4)):
        session.rate(card_id, rating, answer="typed answer", now=now)
    cards = OUT.with_name("mine.md")
    cards.write_text("Q: What does a KV cache store?\nA: The keys and values of earlier positions.\n")
    import_file(store, cards, "mine")
    cards.unlink()
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.conn.execute("PRAGMA journal_mode=DELETE")  # one self-contained file in git
    store.close()
    print(OUT)


if __name__ == "__main__":
    main()
