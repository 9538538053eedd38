"""The progress database: migrations, settings, lesson progress, concurrent writers."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from minigpt.store import Store
from minigpt.store_schema import MIGRATIONS


def test_fresh_database_is_at_latest_schema_in_wal_mode(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    assert store.version == len(MIGRATIONS)
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_reopening_does_not_rerun_migrations(tmp_path):
    path = tmp_path / "p.sqlite3"
    Store(path).set_setting("theme", "ansi-dark")
    again = Store(path)
    assert again.version == len(MIGRATIONS)
    assert again.get_setting("theme") == "ansi-dark"


def test_newer_schema_is_refused_with_a_clear_message(tmp_path):
    path = tmp_path / "p.sqlite3"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    conn.close()
    with pytest.raises(RuntimeError, match="newer minigpt-tutor"):
        Store(path)


def test_failed_transaction_rolls_back(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    with pytest.raises(ZeroDivisionError):
        with store.transaction():
            store.conn.execute("INSERT INTO settings(key, value) VALUES ('a', 'b')")
            raise ZeroDivisionError("a failure inside the transaction")
    assert store.get_setting("a") is None


def test_lesson_position_and_read_mark(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    store.save_lesson_position("intro", 0.4)
    assert store.lesson_position("intro") == pytest.approx(0.4)
    assert store.lessons_read() == set()
    store.save_lesson_position("intro", 1.0, reached_end=True)
    store.save_lesson_position("intro", 0.2)  # scrolling back up keeps the lesson read
    assert store.lessons_read() == {"intro"}
    assert store.lesson_position("intro") == pytest.approx(0.2)
    assert store.last_lesson() == "intro"


def test_the_last_lesson_is_the_one_opened_last_even_within_one_second(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    for lesson in ("attention", "intro", "attention", "mlp"):  # a learner flicking through the list
        store.save_lesson_position(lesson, 0.0)
        assert store.last_lesson() == lesson
    # A row saved by an earlier version (to the second) still sorts by its second.
    store.conn.execute("UPDATE lesson_progress SET updated_at = '2020-01-01T00:00:00Z' WHERE lesson_id = 'mlp'")
    assert store.last_lesson() == "attention"


def test_two_processes_writing_at_once_do_not_corrupt(tmp_path):
    path = tmp_path / "p.sqlite3"
    Store(path).close()
    code = (
        "import sys; from minigpt.store import Store\n"
        "s = Store(sys.argv[1])\n"
        "for i in range(200):\n"
        "    s.set_setting(f'{sys.argv[2]}-{i}', str(i))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), tag]) for tag in ("a", "b")]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    store = Store(path)
    assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    n = store.conn.execute("SELECT COUNT(*) FROM settings WHERE key LIKE 'a-%' OR key LIKE 'b-%'").fetchone()[0]
    assert n == 400
