"""Kata progress in the database (the katas migration): attempts, passes, hints, time to pass,
giving up, drafts, and passed katas counted toward their lessons."""

from __future__ import annotations

import sqlite3

from click.testing import CliRunner

from minigpt.katas import history
from minigpt.katas.catalogue import kata_by_name, load_katas
from minigpt.store import MIGRATIONS, Store


def test_migration_adds_the_kata_tables_to_an_older_database(tmp_path):
    path = tmp_path / "p.sqlite3"
    conn = sqlite3.connect(path)
    for number, sql in enumerate(MIGRATIONS[:2], start=1):  # a database from before the katas
        conn.executescript(sql)
        conn.execute(f"PRAGMA user_version = {number}")
    conn.close()
    store = Store(path)
    assert store.version == len(MIGRATIONS)
    tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"kata_progress", "kata_attempts"} <= tables


def test_attempts_hints_time_to_pass_and_giving_up(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    assert history.record(store, "attention").status == "new"
    history.mark_opened(store, "attention")
    history.record_attempt(store, "attention", passed=False, cases_failed=5, cases_total=7)
    history.record_hints(store, "attention", 2)
    history.record_hints(store, "attention", 1)  # hints come in order: the most shown is kept
    history.record_attempt(store, "attention", passed=True, cases_failed=0, cases_total=7)
    history.record_attempt(store, "attention", passed=True, cases_failed=0, cases_total=7)
    history.record_solution_shown(store, "attention")  # after a pass: not giving up
    r = history.record(store, "attention")
    assert (r.attempts, r.passes, r.hints_used, r.gave_up, r.status) == (3, 2, 2, False, "passed")
    assert r.seconds_to_pass is not None and r.seconds_to_pass >= 0
    history.record_solution_shown(store, "softmax")
    history.save_draft(store, "softmax", "def softmax(x, dim=-1):\n    ...\n")
    s = history.record(store, "softmax")
    assert s.gave_up and s.status == "gave up" and s.draft.startswith("def softmax")
    t = history.totals(store, load_katas())
    assert (t.passed, t.total, t.attempts, t.hints_used, t.gave_up) == (1, len(load_katas()), 3, 2, 1)
    lessons = history.lesson_katas(store, load_katas(), after_reading=False)
    assert lessons["causal-masking"] == (1, 2) and lessons["scaled-dot-product"] == (1, 2)
    credit = history.lesson_katas(store, load_katas())  # readiness: none of those lessons was read
    assert credit["causal-masking"] == (0, 2) and credit["scaled-dot-product"] == (0, 2)


def test_cli_list_show_solution_and_check_without_a_file(tmp_path, monkeypatch):
    from minigpt.cli.main import main

    monkeypatch.setenv("MINIGPT_DATA_DIR", str(tmp_path))  # restored after: --data-dir sets it for the process
    runner = CliRunner()
    data = ["--data-dir", str(tmp_path)]
    listed = runner.invoke(main, data + ["kata", "list"])
    assert listed.exit_code == 0 and len(listed.output.splitlines()) == len(load_katas())
    assert "softmax" in listed.output and "new" in listed.output
    shown = runner.invoke(main, data + ["kata", "show", "attention"])
    assert shown.output == kata_by_name("attention").stub
    missing = runner.invoke(main, data + ["kata", "check", "attention", str(tmp_path / "nope.py")])
    assert missing.exit_code == 2 and missing.output.startswith("Error: cannot read")
    unknown = runner.invoke(main, data + ["kata", "show", "nope"])
    assert unknown.exit_code == 2 and "no kata called 'nope'" in unknown.output
    solution = runner.invoke(main, data + ["kata", "solution", "softmax"])
    assert solution.output == kata_by_name("softmax").solution
    assert history.record(Store(tmp_path / "progress.sqlite3"), "softmax").gave_up


def test_cli_check_exits_0_on_a_pass_and_prints_one_line_per_failing_case(tmp_path, monkeypatch):
    """Graded in this process here; the bounded path has its own test (tests/test_katas.py)."""
    from minigpt.cli.main import main
    from minigpt.katas.grading import grade_function

    monkeypatch.setenv("MINIGPT_DATA_DIR", str(tmp_path))
    monkeypatch.setattr("minigpt.katas.sandbox.grade_source", lambda kata, code, **kw: grade_function(kata, code))
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(kata_by_name("softmax").solution)
    bad.write_text("import torch\n\ndef softmax(x, dim=-1):\n    e = x.exp()\n    return e / e.sum(dim, keepdim=True)\n")
    runner = CliRunner()
    data = ["--data-dir", str(tmp_path)]
    failed = runner.invoke(main, data + ["kata", "check", "softmax", str(bad)])
    assert failed.exit_code == 1
    lines = failed.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("✗ ") for line in lines)  # the overflow case and the -inf row
    assert "max shift" in lines[0]
    passed = runner.invoke(main, data + ["kata", "check", "softmax", str(good)])
    assert passed.exit_code == 0 and "all 9 cases pass" in passed.output
    r = history.record(Store(tmp_path / "progress.sqlite3"), "softmax")
    assert (r.attempts, r.passes) == (2, 1)
