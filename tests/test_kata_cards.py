"""Katas on the FSRS schedule (minigpt.study.kata_cards, migration 6): a passed kata becomes a card,
comes back due, is re-solved from the stub and rated by the stated rule; `minigpt kata due`; the
study counts; and the upgrade of a database saved by the previous release."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

from click.testing import CliRunner

from minigpt.katas import history
from minigpt.store import Store
from minigpt.store_schema import MIGRATIONS
from minigpt.study import kata_cards, scheduler
from minigpt.study.cards import Deck
from minigpt.study.review import StudySession

KATA_MIGRATION = 7  # this feature's entry in MIGRATIONS (1-based, as PRAGMA user_version)


def _pass_at(store: Store, kata: str, when) -> None:
    """A first pass recorded at a chosen time (the progress row is back-dated as a pass then)."""
    history.record_attempt(store, kata, passed=True, cases_failed=0, cases_total=5)
    with store.transaction() as conn:
        conn.execute("UPDATE kata_progress SET opened_at = ?, first_passed_at = ? WHERE kata = ?",
                     (scheduler.iso(when - timedelta(minutes=20)), scheduler.iso(when), kata))


def test_a_kata_passed_yesterday_comes_back_due_and_is_resolved_from_the_stub(tmp_path):
    store = Store(tmp_path / "progress.sqlite3")  # a real SQLite file
    now = scheduler.utc_now()
    _pass_at(store, "softmax", now - timedelta(days=1))
    history.save_draft(store, "softmax", "def softmax(x, dim=-1):\n    return x.softmax(dim)\n")
    assert kata_cards.due(store, now - timedelta(days=1, minutes=-1)) == []  # just passed: not yet
    due = kata_cards.due(store, now)
    assert [c.kata for c in due] == ["softmax"]
    assert kata_cards.history(store, "softmax")[0]["why"] == "first pass"
    resolve = kata_cards.Resolve(store, "softmax", now=now)
    assert resolve.checked(passed=False, mistake="forgot to subtract the max", now=now) is None
    assert resolve.checked(passed=True, mistake=None, now=now + timedelta(minutes=3)) == 1  # Again
    assert history.record(store, "softmax").draft.startswith("def softmax(x, dim=-1)")  # draft untouched
    card = kata_cards.card(store, "softmax")
    assert card.lapses == 0 and card.reps == 2 and not card.is_due(now + timedelta(minutes=3))
    log = kata_cards.history(store, "softmax")
    assert [(r["rating"], r["why"]) for r in log] == [(3, "first pass"), (1, "named mistake")]
    assert log[1]["prev_state"] is not None and log[1]["seconds"] == 180


def test_the_rating_rule():
    assert kata_cards.rating_for(passed=True, named_mistake=True, hints=0) == (1, "named mistake")
    assert kata_cards.rating_for(passed=False, named_mistake=False, hints=0)[0] == 1  # gave up
    assert kata_cards.rating_for(passed=True, named_mistake=False, hints=1)[0] == 2
    assert kata_cards.rating_for(passed=True, named_mistake=False, hints=0, failed_checks=1)[0] == 2
    assert kata_cards.rating_for(passed=True, named_mistake=False, hints=0, seconds=600)[0] == 3
    fast = kata_cards.FAST_SECONDS - 1
    assert kata_cards.rating_for(passed=True, named_mistake=False, hints=0, seconds=fast)[0] == 4
    assert kata_cards.rating_for(passed=True, named_mistake=False, hints=0, seconds=None)[0] == 3


def test_a_fast_clean_resolve_is_easy_and_pushes_the_kata_further_than_good(tmp_path):
    store = Store(tmp_path / "progress.sqlite3")
    now = scheduler.utc_now()
    for kata in ("softmax", "gelu"):
        _pass_at(store, kata, now - timedelta(days=1))
    kata_cards.sync_passed(store)
    easy = kata_cards.Resolve(store, "softmax", now=now)
    hinted = kata_cards.Resolve(store, "gelu", now=now)
    hinted.hint_shown(1)
    assert easy.checked(passed=True, mistake=None, now=now + timedelta(minutes=2)) == 4
    assert hinted.checked(passed=True, mistake=None, now=now + timedelta(minutes=2)) == 2
    assert easy.rated.due > hinted.rated.due
    assert easy.checked(passed=True, mistake=None) is None  # one rating per re-solve


def test_due_katas_count_in_the_study_session_and_are_listed_by_the_shell(tmp_path, isolated_data_dir):
    from minigpt import paths
    from minigpt.cli.main import main

    store = Store(paths.database_path())
    now = scheduler.utc_now()
    _pass_at(store, "attention", now - timedelta(days=1))
    history.record_attempt(store, "gelu", passed=False, cases_failed=2, cases_total=5)  # not passed
    out = CliRunner().invoke(main, ["kata", "due"])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines()[0].startswith("attention  due now") and "gelu" not in out.output
    counts = StudySession(store, Deck()).counts(now)
    assert (counts.katas, counts.total) == (1, 1)
    kata_cards.rate(store, "attention", 3, why="clean pass", now=now)
    assert StudySession(store, Deck()).counts(now).katas == 0
    later = CliRunner().invoke(main, ["kata", "due", "--all"])
    assert "No kata is due" not in later.output and "attention  due " in later.output
    assert CliRunner().invoke(main, ["kata", "due"]).output.startswith("No kata is due.")


def test_upgrading_a_database_saved_by_the_previous_release_cards_its_passed_katas(tmp_path):
    path = tmp_path / "progress.sqlite3"
    conn = sqlite3.connect(path)
    for number, sql in enumerate(MIGRATIONS[:KATA_MIGRATION - 1], start=1):  # the previous release
        conn.executescript(sql)
        conn.execute(f"PRAGMA user_version = {number}")
    yesterday = scheduler.iso(scheduler.utc_now() - timedelta(days=1))
    conn.execute("INSERT INTO kata_progress(kata, opened_at, attempts, passes, hints_used, first_passed_at, "
                 "draft, updated_at) VALUES ('softmax', ?, 1, 1, 2, ?, 'my old draft', ?)",
                 (yesterday, yesterday, yesterday))
    conn.commit()
    conn.close()
    store = Store(path)
    assert store.version == len(MIGRATIONS) >= KATA_MIGRATION
    assert path.with_name("progress.sqlite3.schema-6.bak").exists()
    assert [c.kata for c in kata_cards.due(store)] == ["softmax"]
    assert kata_cards.history(store)[0]["why"] == "first pass, hint shown"  # hints: Hard
    assert history.record(store, "softmax").draft == "my old draft"


def test_checking_a_due_kata_from_the_shell_rates_the_resolve(tmp_path, isolated_data_dir, monkeypatch):
    from minigpt import paths
    from minigpt.cli.main import main
    from minigpt.katas.grading import Failure, Report

    store = Store(paths.database_path())
    _pass_at(store, "softmax", scheduler.utc_now() - timedelta(days=1))
    verdicts = iter([Report("softmax", 5, [Failure("a row", "x", "p", "q", "row 0")]),  # no named mistake
                     Report("softmax", 5)])
    monkeypatch.setattr("minigpt.katas.sandbox.grade_source", lambda kata, code, **kw: next(verdicts))
    code = tmp_path / "softmax.py"
    code.write_text("def softmax(x, dim=-1):\n    return x\n", encoding="utf-8")
    first = CliRunner().invoke(main, ["kata", "check", "softmax", str(code)])
    assert first.exit_code == 1 and "Re-solve rated" not in first.output  # try again: not rated yet
    second = CliRunner().invoke(main, ["kata", "check", "softmax", str(code)])
    assert second.exit_code == 0 and "Re-solve rated Hard (failed a check first)" in second.output
    assert [r["source"] for r in kata_cards.history(store, "softmax")] == ["first pass", "cli"]


def test_rows_the_tutor_never_wrote_are_left_out_and_counted_not_a_traceback(isolated_data_dir):
    from minigpt import paths
    from minigpt.cli.main import main
    from minigpt.skipped_rows import take_skipped_note

    store = Store(paths.database_path())
    now = scheduler.utc_now()
    _pass_at(store, "softmax", now - timedelta(days=1))
    _pass_at(store, "gelu", now - timedelta(days=1))
    kata_cards.sync_passed(store)
    history.record_attempt(store, "attention", passed=True, cases_failed=0, cases_total=7)
    with store.transaction() as conn:  # a hand-edited copy: bad JSON, and a pass at "yesterday"
        conn.execute("UPDATE kata_card SET fsrs_json = '{not json' WHERE kata = 'gelu'")
        conn.execute("UPDATE kata_progress SET first_passed_at = 'yesterday' WHERE kata = 'attention'")
    take_skipped_note()
    out = CliRunner().invoke(main, ["kata", "due"])
    assert out.exit_code == 0 and "Traceback" not in out.output
    assert "softmax" in out.output and "gelu" not in out.output and "attention" not in out.output
    assert StudySession(store, Deck()).counts(now).katas == 1
    assert kata_cards.rate(store, "gelu", 3, why="clean pass", now=now).reps == 1  # starts afresh
    assert take_skipped_note() is not None
