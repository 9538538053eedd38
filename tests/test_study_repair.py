"""Migration 3 on a real SQLite file: a log written under the old grader is re-graded once, the
learner is told once; flagged cards leave the queue until their flag is resolved."""

import json
import sqlite3
from datetime import UTC, datetime, timedelta

from minigpt import settings
from minigpt.store import MIGRATIONS, Store
from minigpt.study import flags, repair
from minigpt.study import scheduler as sch
from minigpt.study.decks import load_decks
from minigpt.study.review import StudySession

DECK = load_decks()
REPAIR_MIGRATION = 3  # this feature's entry in MIGRATIONS (1-based, as PRAGMA user_version)


def _old_database(path, rows):
    """A progress file at schema 2 (before migration 3) holding the given review-log rows,
    each graded by the old grader, with card_state rows as that grader left them."""
    conn = sqlite3.connect(path)
    for sql in MIGRATIONS[:REPAIR_MIGRATION - 1]:
        conn.executescript(sql)
    conn.execute(f"PRAGMA user_version = {REPAIR_MIGRATION - 1}")
    scheduler = sch.make_scheduler()
    cards = {}
    for card_id, rating, mode, answer, when in rows:
        before = cards.get(card_id) or sch.new_card(card_id, when)
        cards[card_id] = sch.review(scheduler, before, rating, when)
        conn.execute("INSERT INTO review_log(card_id, rating, mode, answer, reviewed_at, was_new,"
                     " prev_state) VALUES (?, ?, ?, ?, ?, 0, NULL)",
                     (card_id, rating, mode, answer, sch.iso(when)))
    for card_id, card in cards.items():
        conn.execute("INSERT INTO card_state(card_id, fsrs_json, due, fsrs_state, reps, lapses, "
                     "updated_at) VALUES (?, ?, ?, ?, ?, 0, ?)",
                     (card_id, sch.card_to_json(card), sch.iso(card.due), int(card.state),
                      sum(r[0] == card_id for r in rows), sch.iso(datetime.now(UTC))))
    conn.commit()
    conn.close()


T0 = datetime(2026, 11, 1, 12, tzinfo=UTC)
MASK = "cloze.mask-fill"         # its answer "−∞" was normalised to nothing by the old grader
BF16 = "cloze.bf16-exponent"     # "significand" was not accepted for its second blank


def test_migration_regrades_the_old_wrongs_once(tmp_path):
    path = tmp_path / "progress.sqlite3"
    _old_database(path, [
        (MASK, 1, "quiz:type", "−∞", T0),                                    # right now
        (BF16, 1, "quiz:chapter", "exponent / significand", T0 + timedelta(minutes=1)),
        ("term.query:reverse", 1, "quiz:type", "key", T0 + timedelta(minutes=2)),  # still wrong
        (MASK, 3, "quiz:type", "-inf", T0 + timedelta(days=1)),
    ])
    before = json.loads(sqlite3.connect(path).execute(
        "SELECT fsrs_json FROM card_state WHERE card_id = ?", (MASK,)).fetchone()[0])
    store = Store(path)
    assert store.version == len(MIGRATIONS) >= REPAIR_MIGRATION
    assert store.get_setting(settings.REGRADE.key) == "pending"
    done = repair.regrade_pending(store, DECK)
    assert done.cards == {MASK, BF16} and len(done.log_ids) == 2
    ratings = [r[0] for r in store.conn.execute("SELECT rating FROM review_log ORDER BY id")]
    assert ratings == [3, 3, 1, 3]
    after = json.loads(store.conn.execute(
        "SELECT fsrs_json FROM card_state WHERE card_id = ?", (MASK,)).fetchone()[0])
    assert after["stability"] > before["stability"]  # two Goods, not an Again and a Good
    notice = repair.take_notice(store)
    assert "2 typed answers" in notice and "2 cards" in notice
    assert repair.take_notice(store) is None                      # told once
    assert repair.regrade_pending(store, DECK) is None            # and repaired once
    store.close()
    again = Store(path)
    assert repair.regrade_pending(again, DECK) is None and repair.take_notice(again) is None
    again.close()


def test_a_fresh_database_has_nothing_to_tell(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    assert repair.regrade_pending(store, DECK).log_ids == []
    assert repair.take_notice(store) is None
    store.close()


def test_flagged_cards_leave_the_queue_until_resolved(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    session = StudySession(store, DECK)
    first = session.queue()[0]
    flags.flag_card(store, first, "  the answer   is wrong ")
    assert first not in session.queue() and first not in session.cram_queue()
    (found,) = flags.flags(store)
    assert found.card_id == first and found.note == "the answer is wrong" and found.is_open
    report = flags.markdown_report([found], DECK)
    assert f"## {first}" in report and "the answer is wrong" in report
    assert flags.resolve_flag(store, first) and not flags.resolve_flag(store, first)
    assert first in session.queue() and flags.flags(store) == []
    assert len(flags.flags(store, open_only=False)) == 1
    store.close()
