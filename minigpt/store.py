"""The learner's progress database: one SQLite file shared by lessons, flashcards and quizzes.

WAL mode lets two app instances read and write at once; every write happens inside one
transaction (``with db.transaction():``) so that killing the app loses nothing committed.
The schema is versioned with ``PRAGMA user_version`` and upgraded by the ordered migrations below:
to change the schema, append a migration, never edit an old one.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

MIGRATIONS: list[str] = [
    # 1: lessons and settings
    """
    CREATE TABLE lesson_progress (
        lesson_id   TEXT PRIMARY KEY,
        position    REAL NOT NULL DEFAULT 0,   -- scroll position, 0..1 of the lesson's height
        read_at     TEXT,                      -- UTC ISO time the learner reached the end
        updated_at  TEXT NOT NULL
    );
    CREATE TABLE settings (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
    # 2: flashcards (minigpt.study): scheduling state per card id, and one log row per answer
    """
    CREATE TABLE card_state (
        card_id       TEXT PRIMARY KEY,          -- our stable id from the deck file
        fsrs_json     TEXT NOT NULL,             -- fsrs.Card.to_dict() as JSON
        due           TEXT NOT NULL,             -- UTC, same format as reviewed_at
        fsrs_state    INTEGER NOT NULL,          -- 1 learning, 2 review, 3 relearning
        reps          INTEGER NOT NULL DEFAULT 0,
        lapses        INTEGER NOT NULL DEFAULT 0,
        suspended     INTEGER NOT NULL DEFAULT 0,
        buried_until  TEXT,
        updated_at    TEXT NOT NULL
    );
    CREATE INDEX card_state_due ON card_state(due);
    CREATE TABLE review_log (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        card_id       TEXT NOT NULL,
        rating        INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),
        mode          TEXT NOT NULL,             -- review, cram or quiz
        answer        TEXT,
        reviewed_at   TEXT NOT NULL,
        duration_ms   INTEGER,
        was_new       INTEGER NOT NULL DEFAULT 0,
        prev_state    TEXT                      -- the card_state row before, as JSON (NULL: none)
    );
    CREATE INDEX review_log_card ON review_log(card_id);
    CREATE INDEX review_log_time ON review_log(reviewed_at);
    CREATE TABLE user_cards (
        card_id       TEXT PRIMARY KEY,
        deck          TEXT NOT NULL,
        front         TEXT NOT NULL,
        back          TEXT NOT NULL,
        source        TEXT,
        created_at    TEXT NOT NULL
    );
    """,
]


class Store:
    """A connection to the progress database with its schema brought up to date."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so each transaction is explicit.
        self.conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None,
                                    check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")  # durable at each commit under WAL
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.conn.execute("PRAGMA busy_timeout=10000")
        self.migrate()

    # -- schema ---------------------------------------------------------------------------------
    @property
    def version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def migrate(self) -> None:
        with self.transaction(immediate=True):
            current = self.version
            if current > len(MIGRATIONS):
                raise RuntimeError(
                    f"{self.path} was written by a newer minigpt-tutor (schema {current}, "
                    f"this version knows {len(MIGRATIONS)}); upgrade the tutor to open it"
                )
            for number, sql in enumerate(MIGRATIONS[current:], start=current + 1):
                for statement in sql.split(";"):
                    if statement.strip():
                        self.conn.execute(statement)
                self.conn.execute(f"PRAGMA user_version = {number}")

    @contextmanager
    def transaction(self, immediate: bool = True) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT, rolled back on any exception."""
        self.conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()

    # -- settings -------------------------------------------------------------------------------
    def get_setting(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_setting(self, key: str, value: str) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT INTO settings(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -- lessons --------------------------------------------------------------------------------
    def lesson_position(self, lesson_id: str) -> float:
        row = self.conn.execute(
            "SELECT position FROM lesson_progress WHERE lesson_id = ?", (lesson_id,)
        ).fetchone()
        return float(row[0]) if row else 0.0

    def save_lesson_position(self, lesson_id: str, position: float, *, reached_end: bool = False) -> None:
        now = _utc_now()
        with self.transaction():
            self.conn.execute(
                """INSERT INTO lesson_progress(lesson_id, position, read_at, updated_at)
                   VALUES (?, ?, ?, ?)
                   ON CONFLICT(lesson_id) DO UPDATE SET
                     position = excluded.position,
                     read_at = COALESCE(lesson_progress.read_at, excluded.read_at),
                     updated_at = excluded.updated_at""",
                (lesson_id, max(0.0, min(1.0, position)), now if reached_end else None, now),
            )

    def lessons_read(self) -> set[str]:
        rows = self.conn.execute("SELECT lesson_id FROM lesson_progress WHERE read_at IS NOT NULL")
        return {r[0] for r in rows}

    def last_lesson(self) -> str | None:
        row = self.conn.execute(
            "SELECT lesson_id FROM lesson_progress ORDER BY updated_at DESC LIMIT 1"
        ).fetchone()
        return row[0] if row else None


def _utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
