"""Scheduling through a real SQLite file: rate, preview, undo, cram, bury, suspend, limits, leeches,
stats, a kill -9 mid-session, and two processes writing at once."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from minigpt.store import Store
from minigpt.study import stats
from minigpt.study.decks import load_decks
from minigpt.study.review import LEECH_LAPSES, StudySession, history

ROOT = Path(__file__).resolve().parent.parent
DECKS = ROOT / "lessons" / "decks"
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def deck():
    return load_decks(DECKS)


@pytest.fixture
def session(tmp_path, deck):
    store = Store(tmp_path / "progress.sqlite3")
    yield StudySession(store, deck)
    store.close()


def test_new_cards_limited_per_day(session):
    c = session.counts(T0)
    assert (c.new, c.learning, c.due) == (20, 0, 0)
    session.set_new_per_day(3)
    q = session.queue(T0)
    assert len(q) == 3
    session.rate(q[0], 3, now=T0)
    c = session.counts(T0)
    assert c.new == 2 and c.learning == 1        # learning, due in 10 min: within the learn-ahead window
    assert session.counts(T0 + timedelta(minutes=11)).learning == 1
    assert session.counts(T0 + timedelta(days=1)).new == 3  # a new (local) day refills the allowance


def test_rate_round_trips_through_the_file(tmp_path, deck):
    path = tmp_path / "p.sqlite3"
    s = StudySession(Store(path), deck)
    cid = "term.layer-norm"
    labels = s.button_labels(cid, T0)
    assert labels[1].startswith("Again · ") and labels[3].startswith("Good · ")
    preview = s.preview(cid, T0)
    st = s.rate(cid, 3, answer="layer norm", duration_ms=1200, now=T0)
    assert st.due - T0 == preview[3]            # the previewed interval is the one applied
    s.store.close()
    s2 = StudySession(Store(path), deck)
    again = s2.status(cid)
    assert again.fsrs.to_dict() == st.fsrs.to_dict() and again.reps == 1
    (row,) = history(s2.store, cid)
    assert (row["rating"], row["mode"], row["answer"], row["duration_ms"]) == (3, "review",
                                                                              "layer norm", 1200)


def test_intervals_grow_with_good_answers(session):
    cid, now = "term.query", T0
    gaps = []
    for _ in range(5):
        st = session.rate(cid, 3, now=now)
        gaps.append(st.due - now)
        now = st.due
    assert gaps[-1] > gaps[-2] > timedelta(days=1)
    assert session.counts(now).due == 1


def test_undo_restores_exact_previous_state(session):
    cid = "term.key"
    session.rate(cid, 3, now=T0)
    st1 = session.rate(cid, 3, now=T0 + timedelta(minutes=10))
    row_before = dict(session._row(cid))
    session.rate(cid, 1, now=T0 + timedelta(days=3))
    assert session.undo() == cid
    assert dict(session._row(cid)) == row_before
    assert session.status(cid).fsrs.to_dict() == st1.fsrs.to_dict()
    assert len(history(session.store, cid)) == 2
    session.undo()
    session.undo()
    assert session._row(cid) is None and session.status(cid).is_new
    assert session.undo() is None


def test_cram_does_not_touch_schedule(session):
    cid = "term.value"
    session.rate(cid, 3, now=T0)
    row = dict(session._row(cid))
    session.cram(cid, 1, now=T0 + timedelta(minutes=1))
    session.cram(cid, 4, now=T0 + timedelta(minutes=2))
    assert dict(session._row(cid)) == row
    modes = [r["mode"] for r in history(session.store, cid)]
    assert modes == ["review", "cram", "cram"]
    assert cid in session.cram_queue()
    session.undo()
    assert dict(session._row(cid)) == row and len(history(session.store, cid)) == 2


def test_suspend_and_bury(session):
    session.set_new_per_day(1000)
    cid = session.queue(T0)[0]
    session.suspend(cid, now=T0)
    assert cid not in session.queue(T0) and cid not in session.cram_queue()
    session.suspend(cid, False, now=T0)
    assert cid in session.queue(T0)
    until = session.bury(cid, now=T0)
    assert until == datetime(2025, 3, 2, tzinfo=UTC)
    assert cid not in session.queue(T0 + timedelta(hours=14))
    assert cid in session.queue(until)
    assert session.status(cid).is_new


def test_lapses_and_leech(session):
    cid, now = "term.rope", T0
    for _ in range(4):                        # graduate to the Review state
        now = session.rate(cid, 3, now=now).due
    for i in range(LEECH_LAPSES):
        st = session.rate(cid, 1, now=now)    # lapse
        assert st.lapses == i + 1
        for _ in range(3):
            now = session.rate(cid, 3, now=st.due).due
            st = session.status(cid)
    assert session.status(cid).is_leech and session.leeches() == [cid]
    assert stats.weakest_cards(session.store, 1) == [(cid, LEECH_LAPSES, True)]


def test_stats(session):
    now = T0
    session.rate("term.gelu", 3, now=now)
    session.rate("term.gelu", 3, now=now + timedelta(minutes=10))     # -> review state
    session.rate("term.gelu", 1, now=now + timedelta(days=1))         # non-new, Again
    session.rate("term.gelu", 3, now=now + timedelta(days=1, minutes=11))
    session.rate("term.bert", 2, now=now + timedelta(days=2))
    act = stats.reviews_per_day(session.store, days=30, now=now + timedelta(days=2))
    assert act.per_day[T0.date()] == 2 and act.streak == 3 and act.longest_streak == 3
    ret = stats.retention(session.store)
    assert ret.reviews == 3 and ret.true_retention == pytest.approx(2 / 3) and ret.desired == 0.9
    assert stats.button_breakdown(session.store) == {1: 1, 2: 1, 3: 3, 4: 0}
    fc = stats.due_forecast(session.store, days=7, now=now + timedelta(days=2))
    assert len(fc) == 7 and sum(n for _, n in fc) == 2


WORKER = textwrap.dedent("""
    import sys
    from datetime import datetime, timedelta, timezone
    from minigpt.store import Store
    from minigpt.study.decks import load_decks
    from minigpt.study.review import StudySession
    db, decks, tag, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    s = StudySession(Store(db), load_decks(decks))
    ids = sorted(s.deck.cards)
    t = datetime(2025, 3, 1, tzinfo=timezone.utc)
    for i in range(n):
        cid = ids[i % len(ids)]
        s.rate(cid, 1 + i % 4, answer=f"{tag}-{i}", now=t + timedelta(seconds=i))
        print(f"{tag}-{i} {cid} {1 + i % 4}", flush=True)
""")


def _worker(tmp_path, db, tag, n):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-c", WORKER, str(db), str(DECKS), tag, str(n)],
                            stdout=subprocess.PIPE, text=True, env=env, cwd=tmp_path)


def _check_integrity(db):
    store = Store(db)
    assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return store


def test_kill_9_loses_nothing_committed(tmp_path):
    db = tmp_path / "p.sqlite3"
    Store(db).close()
    proc = _worker(tmp_path, db, "k", 100000)
    done = []
    deadline = time.time() + 60
    while len(done) < 150 and time.time() < deadline:
        done.append(proc.stdout.readline().split())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(done) >= 150
    store = _check_integrity(db)
    rows = {r["answer"]: r for r in store.conn.execute("SELECT * FROM review_log")}
    for answer, cid, rating in done:
        assert answer in rows, f"committed answer {answer} lost"
        assert rows[answer]["card_id"] == cid and rows[answer]["rating"] == int(rating)
    # card_state agrees with the log, answer for answer
    for cid, reps in store.conn.execute("SELECT card_id, reps FROM card_state"):
        n = store.conn.execute("SELECT COUNT(*) FROM review_log WHERE card_id = ?",
                               (cid,)).fetchone()[0]
        assert reps == n
    store.close()


def test_two_processes_writing_at_once(tmp_path):
    db = tmp_path / "p.sqlite3"
    Store(db).close()
    procs = [_worker(tmp_path, db, tag, 150) for tag in ("a", "b")]
    for p in procs:
        p.stdout.read()
        assert p.wait(timeout=120) == 0
    store = _check_integrity(db)
    assert store.conn.execute("SELECT COUNT(*) FROM review_log").fetchone()[0] == 300
    for cid, reps, blob in store.conn.execute("SELECT card_id, reps, fsrs_json FROM card_state"):
        n = store.conn.execute("SELECT COUNT(*) FROM review_log WHERE card_id = ?",
                               (cid,)).fetchone()[0]
        assert reps == n and json.loads(blob)["state"] in (1, 2, 3)
    store.close()


def test_learning_cards_due_within_the_learn_ahead_window_are_counted_and_shown(session):
    from minigpt.study.review import LEARN_AHEAD

    session.set_new_per_day(1)
    first = session.queue(T0)[0]
    session.rate(first, 3, now=T0)  # Good on a new card: learning, due in 10 minutes
    assert session.counts(T0) == type(session.counts(T0))(new=0, learning=1, due=0)
    assert session.next_card(T0) == first  # nothing else left: learned ahead, not "nothing to study"
    assert session.next_due(T0) is None
    session.rate(first, 3, now=T0)  # Good again: out of learning, due in days (past the window)
    assert session.next_card(T0) is None and session.counts(T0).total == 0
    due = session.next_due(T0)
    assert due is not None and due - T0 > LEARN_AHEAD


def test_cram_reviews_cards_met_so_far_not_lessons_never_opened(session):
    assert session.cram_queue() == []  # nothing answered, no lesson opened
    session.store.save_lesson_position("query-key-value", 0.1)  # opened, not read to the end
    crammed = session.cram_queue()
    assert crammed and {session.deck[c].lesson for c in crammed} == {"query-key-value"}
    session.rate("term.value", 3, now=T0)
    assert "term.value" in session.cram_queue()
