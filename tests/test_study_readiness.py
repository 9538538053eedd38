"""Readiness per lesson, worked by hand for a two-lesson fixture (minigpt.study.readiness)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

import pytest
from click.testing import CliRunner
from fsrs import Card, State

from minigpt.store import Store
from minigpt.study import readiness, scheduler

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TODAY = datetime(2026, 1, 11, tzinfo=UTC)  # ten days after T0


def _fixture(store: Store) -> readiness.Readiness:
    store.save_lesson_position("a", 1.0, reached_end=True)
    # a1: stability 10 days, last seen ten days ago: retrievability 0.9 by FSRS's definition
    card = Card(card_id=1, state=State.Review, stability=10.0, difficulty=5.0, due=TODAY, last_review=T0)
    with store.transaction() as conn:
        conn.execute("INSERT INTO card_state(card_id, fsrs_json, due, fsrs_state, updated_at) "
                     "VALUES ('a1', ?, ?, 2, ?)", (scheduler.card_to_json(card), scheduler.iso(TODAY), scheduler.iso(T0)))
        # one chapter quiz on lesson a: a1 right (Good), a2 wrong (Again); a practice answer is not counted
        for card_id, rating, when in (("a1", 3, "2026-01-02"), ("a2", 1, "2026-01-03"), ("a2", 4, "2026-01-04")):
            mode = "quiz:chapter" if when != "2026-01-04" else "review"
            conn.execute("INSERT INTO review_log(card_id, rating, mode, reviewed_at) VALUES (?, ?, ?, ?)",
                         (card_id, rating, mode, when))
    return readiness.readiness(store, [("a", "Lesson A"), ("b", "Lesson B")], {"a": ["a1", "a2"]},
                        {"b": (1, 2)}, now=TODAY, on=TODAY)  # recall judged today: 0.9 by definition


def test_readiness_worked_by_hand(tmp_path):
    r = _fixture(Store(tmp_path / "p.sqlite3"))
    a, b = r.lessons
    assert a.parts == pytest.approx({"read": 1.0, "quiz": 0.5, "recall": 0.45, "katas": None})
    assert b.parts == {"read": 0.0, "quiz": None, "recall": None, "katas": 0.5}
    # a: (0.2·1 + 0.3·0.5 + 0.35·0.45) / (0.2 + 0.3 + 0.35) = 0.5075 / 0.85
    assert a.figure == pytest.approx(0.5075 / 0.85)
    # b: (0.2·0 + 0.15·0.5) / (0.2 + 0.15) = 0.075 / 0.35, and unread: a fifth of that
    assert b.figure == pytest.approx(0.2 * 0.075 / 0.35)
    assert r.overall == pytest.approx((0.5075 / 0.85 + 0.2 * 0.075 / 0.35) / 2)
    assert [x.lesson for x in r.weakest()] == ["b", "a"]
    # b lags most on reading (gap 0.2 > katas' 0.075); a on recall (0.35·0.55 > quiz's 0.3·0.5)
    assert (b.next_step, a.next_step) == ("read", "recall")


def test_table_and_json_agree(tmp_path):
    r = _fixture(Store(tmp_path / "p.sqlite3"))
    text = readiness.table(r)
    assert "Lesson A" in text and " 60%" in text and "overall 32%" in text
    assert "Lesson B (4%): read the lesson" in text
    data = r.as_dict()
    assert data["weakest"] == ["b", "a"] and data["overall"] == pytest.approx(0.32, abs=1e-4)
    assert all(len(line) <= 80 for line in text.splitlines())


def test_progress_command_prints_the_table_and_json():
    from minigpt.cli.main import main

    out = CliRunner().invoke(main, ["progress"])
    assert out.exit_code == 0, out.output
    assert "overall   0%" not in out.output and "overall 0%" in out.output and "weakest:" in out.output
    assert "Mock interviews" not in out.output  # none taken: no empty chart
    assert "No interview day set: `minigpt plan --date YYYY-MM-DD`" in out.output
    for part, meaning in readiness.MEANING.items():  # one line says what each column means
        assert f"{part:<7}{meaning}" in out.output
    data = json.loads(CliRunner().invoke(main, ["progress", "--json"]).output)
    assert data["overall"] == 0 and len(data["weakest"]) == 3 and data["lessons"][0]["parts"]["read"] == 0
    assert data["interviews"] == []


def test_progress_command_charts_past_interviews(tmp_path):
    from minigpt import paths
    from minigpt.cli.main import main
    from minigpt.study import interview

    store = Store(paths.database_path())
    for day, score in ((1, 0.0), (3, 1.0)):
        answers = [interview.Answer(interview.Question("define", "a", "t.a"), score, 5)]
        interview.save(store, interview.Report(10, answers, readiness=0.5), f"2026-01-0{day}T08:00:00Z", "x")
    from minigpt.study.plan import set_plan

    set_plan(store, date.today() + timedelta(days=9), ["attention"])
    store.close()
    out = CliRunner().invoke(main, ["progress"])
    assert out.exit_code == 0, out.output
    assert f"Interview day {date.today() + timedelta(days=9)}, in 9 days: `minigpt plan`" in out.output
    chart = out.output.split("Mock interviews\n", 1)[1].splitlines()
    assert chart[0] == "2 interviews: 0% on 2026-01-01 → 100% on 2026-01-03"
    assert chart[1].startswith("100%┤") and chart[1].endswith("●")   # the second, at the right
    assert chart[7].startswith("  0%┤●")                             # the first, at the left
    assert chart[4].count("○") == 2 and chart[4].startswith(" 50%┤")  # readiness 50% both times
    assert len(chart) <= 12 and all(len(line) <= 80 for line in out.output.splitlines())
    data = json.loads(CliRunner().invoke(main, ["progress", "--json"]).output)
    assert data["interview_day"] == str(date.today() + timedelta(days=9)) and data["plan_lessons"] == ["attention"]
    assert data["interviews"] == [
        {"started_at": "2026-01-01T08:00:00Z", "score": 0.0, "questions": 1, "readiness": 0.5},
        {"started_at": "2026-01-03T08:00:00Z", "score": 1.0, "questions": 1, "readiness": 0.5}]
