"""The progress database: damaged, read-only, locked, full, from a newer tutor, and from round 1.

Each case ends with a clear message and a way on (a backup kept and a fresh start, read-only or
in-memory use, a retry), the app's screen still working, and nothing already committed lost.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from minigpt.store import MIGRATIONS, Store, StoreBusy, StoreError, StoreFull
from minigpt.study.anki import import_file, user_cards
from minigpt.study.review import history
from minigpt.study.scheduler import card_from_json
from tests.helpers.hostile import REPO, assert_no_control, decoded, denied, minigpt, screen_text
from tui.study.flashcards import FlashcardsScreen

ROUND1 = REPO / "tests" / "fixtures" / "round1" / "progress.sqlite3"


def round1_copy(tmp_path: Path) -> Path:
    target = tmp_path / "progress.sqlite3"
    shutil.copy(ROUND1, target)
    return target


def test_round_one_database_opens_with_everything_in_it(tmp_path):
    path = round1_copy(tmp_path)
    before = sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0]
    store = Store(path)
    assert store.version == len(MIGRATIONS) and store.notice is None
    assert store.get_setting("theme") == "textual-light"
    assert store.lessons_read() == {"why-transformers"}
    assert store.lesson_position("query-key-value") == pytest.approx(0.4)
    assert [r["rating"] for r in history(store)] == [3, 1, 4]
    assert [c.front for c in user_cards(store)] == ["What does a KV cache store?"]
    states = store.conn.execute("SELECT card_id, fsrs_json FROM card_state").fetchall()
    assert len(states) == 3 and all(card_from_json(s["fsrs_json"]).card_id for s in states)
    if before < len(MIGRATIONS):  # a migration ran: the file as it was is kept beside it
        assert (tmp_path / f"progress.sqlite3.schema-{before}.bak").exists()


def test_damaged_file_is_kept_aside_and_a_fresh_one_started(tmp_path):
    path = tmp_path / "progress.sqlite3"
    path.write_bytes(b"this is not an SQLite database\n" * 100)
    store = Store(path)
    backups = sorted(tmp_path.glob("progress.sqlite3.damaged-*"))
    assert len(backups) == 1 and backups[0].read_bytes().startswith(b"this is not an SQLite database")
    assert "damaged" in store.notice and backups[0].name in store.notice
    store.set_setting("theme", "x")
    assert Store(path).get_setting("theme") == "x" and Store(path).notice is None


def test_truncated_database_is_kept_aside(tmp_path):
    path = round1_copy(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    store = Store(path)
    assert store.notice and "damaged" in store.notice
    assert len(list(tmp_path.glob("progress.sqlite3.damaged-*"))) == 1
    assert store.version == len(MIGRATIONS)


async def test_app_says_the_file_was_damaged(tmp_path, quick_decks, make_app):
    path = tmp_path / "progress.sqlite3"
    path.write_bytes(b"\x00garbage" * 500)
    app = make_app(store=Store(path))
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "Progress" in text and "damaged" in text and "fresh one" in text


def test_folder_that_cannot_exist_gives_an_in_memory_database(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    store = Store(blocker / "progress.sqlite3")
    assert "not being saved" in store.notice
    store.set_setting("theme", "x")  # works, for this session
    assert store.get_setting("theme") == "x"


def test_database_path_that_is_a_folder(tmp_path):
    (tmp_path / "progress.sqlite3").mkdir()
    store = Store(tmp_path / "progress.sqlite3")
    assert "not being saved" in store.notice


def test_read_only_file_opens_read_only(tmp_path):
    path = round1_copy(tmp_path)
    Store(path).close()  # in WAL mode now, as the app leaves it
    denied(path)  # skips when running as root
    path.chmod(0o444)
    store = Store(path)
    assert store.read_only and "read-only" in store.notice
    assert store.get_setting("theme") == "textual-light"
    with pytest.raises(StoreError, match="read-only"):
        store.set_setting("theme", "y")


def _hold_write_lock(path: Path) -> sqlite3.Connection:
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    return other


def test_locked_by_another_writer_fails_fast_and_retries(tmp_path):
    path = tmp_path / "progress.sqlite3"
    store = Store(path, busy_timeout_s=0.3)
    other = _hold_write_lock(path)
    start = time.monotonic()
    with pytest.raises(StoreBusy, match="try again"):
        store.save_lesson_position("attention", 0.5)
    assert time.monotonic() - start < 3
    other.execute("ROLLBACK")
    store.save_lesson_position("attention", 0.5)
    assert store.lesson_position("attention") == 0.5


def test_a_locked_database_opens_when_no_upgrade_is_needed(tmp_path):
    path = tmp_path / "progress.sqlite3"
    Store(path).set_setting("theme", "x")
    other = _hold_write_lock(path)
    start = time.monotonic()
    assert Store(path, busy_timeout_s=5).get_setting("theme") == "x"  # reads never wait
    assert time.monotonic() - start < 3
    other.execute("ROLLBACK")


def test_full_disk_loses_nothing_and_writes_nothing_half(tmp_path):
    path = round1_copy(tmp_path)
    store = Store(path)
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own "disk full"
    cards = tmp_path / "many.md"
    cards.write_text("".join(f"Q: question {i} {'x' * 500}\nA: answer {i}\n" for i in range(200)))
    with pytest.raises(StoreFull, match="full; nothing was saved"):
        import_file(store, cards, "many")
    assert len(user_cards(store)) == 1  # none of the 200, the round-1 card still there
    with pytest.raises(StoreFull):
        store.set_setting("notes", "y" * 100_000)
    assert store.get_setting("theme") == "textual-light"
    store.conn.execute("PRAGMA max_page_count = 1000000")  # space freed: the same write works
    assert len(import_file(store, cards, "many")) == 200


def test_newer_schema_is_refused_with_one_line(tmp_path):
    path = tmp_path / "user-data" / "progress.sqlite3"
    path.parent.mkdir()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StoreError, match="newer minigpt-tutor"):
        Store(path)
    r = minigpt(data_dir=path.parent, timeout=60)  # the app itself: one line before any screen
    err = decoded(r.stderr)
    assert r.returncode == 2 and err.startswith("Error: ") and err.count("\n") == 1, err
    assert_no_control(err)


async def test_rating_while_locked_keeps_the_card_and_retries(tmp_path, quick_decks, make_app):
    path = tmp_path / "progress.sqlite3"
    app = make_app(store=Store(path, busy_timeout_s=0.3))
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.press("f")
        await pilot.pause()
        screen = app.screen
        card = screen.current
        await pilot.press("space")
        other = _hold_write_lock(path)
        await pilot.press("3")
        await pilot.pause()
        assert app.screen is screen and screen.current == card  # still there, answer shown
        assert history(app.store) == []
        assert "Not saved" in screen_text(app)
        other.execute("ROLLBACK")
        await pilot.press("3")  # the same key again: this time it is recorded
        await pilot.pause()
        assert [r["card_id"] for r in history(app.store)] == [card]
        assert isinstance(app.screen, FlashcardsScreen) and screen.current != card


def test_an_upgrade_keeps_a_copy_of_the_file_as_it_was(tmp_path):
    path = tmp_path / "progress.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(MIGRATIONS[0])  # a schema-1 database, as the first release wrote it
    old.execute("INSERT INTO settings VALUES ('theme', 'old')")
    old.execute("PRAGMA user_version = 1")
    old.commit()
    old.close()
    store = Store(path)
    assert store.version == len(MIGRATIONS) and store.get_setting("theme") == "old"
    copy = sqlite3.connect(tmp_path / "progress.sqlite3.schema-1.bak")
    assert copy.execute("PRAGMA user_version").fetchone()[0] == 1
    assert copy.execute("SELECT value FROM settings").fetchall() == [("old",)]
