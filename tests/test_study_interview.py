"""Mock interviews (minigpt.study.interview): the selection weights and plan on a seeded session,
the report, its storage and trend, and misses fed to the flashcard schedule."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from minigpt.store import Store
from minigpt.study import interview as iv
from minigpt.study import interview_trend as trend
from minigpt.study import numeric
from minigpt.study.decks import Deck, StudyCard
from minigpt.study.review import StudySession


def _deck() -> Deck:
    item = numeric.generate("warmup_lr", {"peak": 0.001, "warmup": 100, "step": 50})
    cards = [
        StudyCard("t.a1", "term", "a", "A1?", "def a1", term="alpha one", definition="the first"),
        StudyCard("t.a2", "term", "a", "A2?", "def a2", term="alpha two", definition="the second"),
        StudyCard("q.a", "question", "a", "Why a?", "because", checklist=("point one", "point two")),
        StudyCard("n.a", "numeric", "a", item.prompt, item.solution, numeric=item, template="warmup_lr"),
        StudyCard("t.b1", "term", "b", "B1?", "def b1", term="beta one", definition="the b"),
        StudyCard("q.b", "question", "b", "Why b?", "since", checklist=("p", "q", "r")),
        StudyCard("t.c", "term", "c", "C?", "def c", term="gamma", definition="unread"),
    ]
    return Deck({c.id: c for c in cards}, [])


def test_weights_favour_the_weakest_lesson():
    assert iv.lesson_weights(["a", "b"], {"a": 0.9, "b": 0.1}) == pytest.approx({"a": 0.2, "b": 1.0})
    counts = Counter(iv.plan(_deck(), ["a", "b"], {"a": 0.9, "b": 0.1}, seed=seed)[0].lesson
                     for seed in range(300))  # the first draw: 1.0 : 0.2, so b about 5 times in 6
    assert counts["b"] > 3 * counts["a"] > 0


def test_seeded_plan_mixes_kinds_from_read_lessons_only():
    plan = iv.plan(_deck(), ["a", "b"], {"a": 0.5, "b": 0.5}, minutes=10, seed=3,
                   katas_by_lesson={"b": ["softmax"]}, allow_code=True)
    assert iv.question_count(10) == 4 and len(plan) == 4
    assert {q.lesson for q in plan} <= {"a", "b"}          # c is not read
    assert len({q.card_id or q.kata for q in plan}) == 4    # nothing twice
    assert len({q.kind for q in plan}) >= 3                  # kinds turned round
    assert sum(q.kind == "kata" for q in plan) <= 1
    define = [q for q in plan if q.kind == "define"]
    assert all(q.prompt == f"Define “{_deck()[q.card_id].term}”." and not q.kata for q in define)
    assert all(q.rubric for q in plan if q.kind == "explain")
    assert plan == iv.plan(_deck(), ["a", "b"], {"a": 0.5, "b": 0.5}, minutes=10, seed=3,
                           katas_by_lesson={"b": ["softmax"]}, allow_code=True)  # seeded: repeatable
    compute = [q for q in plan if q.kind == "compute"]
    for q in compute:  # a fresh instance, graded by the one parser against its own inputs
        want = q.params["peak"] * q.params["step"] / q.params["warmup"]
        assert iv.grade_compute(_deck(), q, repr(want)).correct
    no_code = iv.plan(_deck(), ["a", "b"], {}, minutes=30, seed=3, katas_by_lesson={"b": ["softmax"]})
    assert all(q.kind != "kata" for q in no_code)  # refused where edited code may not run


def _progress_db(tmp_path) -> Store:
    """A fixed progress database: lessons a and b read, chapter-quiz answers on some cards."""
    store = Store(tmp_path / "p.sqlite3")
    store.save_lesson_position("a", 1.0, reached_end=True)
    store.save_lesson_position("b", 1.0, reached_end=True)
    with store.transaction() as conn:
        for card_id, rating in (("t.a1", 3), ("q.a", 3), ("t.a2", 1), ("t.b1", 1), ("q.b", 1)):
            conn.execute("INSERT INTO review_log(card_id, rating, mode, reviewed_at) "
                         "VALUES (?, ?, 'quiz:chapter', '2026-01-01T00:00:00Z')", (card_id, rating))
    return store


def test_a_seed_and_a_progress_database_fix_the_exact_questions(tmp_path):
    from datetime import UTC, datetime

    from minigpt.study import readiness

    deck = _deck()
    cards: dict[str, list[str]] = {}
    for card in deck:
        cards.setdefault(card.lesson, []).append(card.id)
    r = readiness.readiness(_progress_db(tmp_path), [("a", "A"), ("b", "B"), ("c", "C")], cards, {},
                            now=datetime(2026, 1, 2, tzinfo=UTC))
    figures = {x.lesson: x.figure for x in r.lessons}
    # read 0.2 + quiz 0.3 × share right, over the weights that apply (no katas: 0.85); recall 0
    assert figures == pytest.approx({"a": (0.2 + 0.3 * 2 / 3) / 0.85, "b": 0.2 / 0.85, "c": 0.0})

    def asked(seed):
        plan = iv.plan(deck, ["a", "b"], figures, minutes=10, seed=seed,
                       katas_by_lesson={"b": ["softmax"]}, allow_code=True)
        return [(q.kind, q.lesson, q.card_id or q.kata, q.params) for q in plan]

    assert asked(7) == [
        ("define", "a", "t.a1", {}),
        ("explain", "a", "q.a", {}),
        ("compute", "a", "n.a", {"peak": 0.003, "warmup": 500, "step": 50}),  # the template's draw
        ("kata", "b", "softmax", {}),
    ]
    assert asked(8) == [
        ("define", "a", "t.a2", {}),
        ("explain", "a", "q.a", {}),
        ("compute", "a", "n.a", {"peak": 0.0003, "warmup": 2000, "step": 1400}),
        ("kata", "b", "softmax", {}),
    ]
    assert asked(7) == asked(7)  # nothing from the clock, nor from set or hash order
    compute = iv.plan(deck, ["a", "b"], figures, minutes=10, seed=7, katas_by_lesson={"b": ["softmax"]},
                      allow_code=True)[2]
    assert compute.prompt == numeric.generate("warmup_lr", compute.params).prompt
    assert compute.note == "within 1% of the answer"  # shown with the question


def _report() -> iv.Report:
    q = iv.Question
    return iv.Report(10, [
        iv.Answer(q("define", "a", "t.a1", prompt="What is alpha one?", answer="the first"), 1.0, 30),
        iv.Answer(q("explain", "a", "q.a", prompt="Why a?", answer="because", rubric=("point one", "point two")),
                  0.5, 90, missed=("point two",)),
        iv.Answer(q("define", "b", "t.b1", prompt="What is beta one?", answer="the b"), 0.0, 12, skipped=True),
        iv.Answer(q("kata", "b", kata="softmax"), 1.0, 240),
    ], {"a": "Lesson A", "b": "Lesson B"})


def test_report_by_lesson_and_kind_time_missed_points_and_next_steps():
    r = _report()
    assert r.score == pytest.approx(2.5 / 4)
    assert r.per_lesson == pytest.approx({"a": 0.75, "b": 0.5})
    assert r.per_kind == pytest.approx({"define": 0.5, "explain": 0.5, "kata": 1.0})
    assert r.missed_points == ["point two"]
    assert r.next_steps()[0].startswith("reread Lesson B (50%)") and "skipped" in r.next_steps()[-1]
    text = r.text()
    assert "Score 62% on 4 questions" in text and "240s" in text and "- point two" in text
    assert all(len(line) <= 76 for line in text.splitlines())
    r.titles["b"] = "Assembling the Transformer block, and a great deal more"
    assert r.next_steps()[0] == "reread Assembling the Transformer bloc… (50%), then its chapter quiz"
    assert all(len(line) <= 74 for line in r.text().splitlines())  # inside the screen's frame at 80


def test_reports_are_kept_with_a_trend_and_misses_rated_again(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    assert trend.points(store) == [] and trend.summary([]) == ""
    iv.save(store, iv.Report(5, [iv.Answer(iv.Question("define", "a", "t.a1"), 0.0, 3)]),
            "2026-01-01T09:00:00Z", "x")  # a report from before readiness was recorded
    report = _report()
    report.readiness = 0.4
    iv.save(store, report, "2026-01-02T09:00:00Z", "y")
    assert trend.points(store) == [trend.TrendPoint("2026-01-01T09:00:00Z", 0.0, 1, None),
                                   trend.TrendPoint("2026-01-02T09:00:00Z", 0.625, 4, 0.4)]
    assert trend.summary(trend.points(store)) == "2 interviews: 0% on 2026-01-01 → 62% on 2026-01-02"
    saved = json.loads(store.conn.execute("SELECT report FROM interview ORDER BY id DESC").fetchone()[0])
    assert saved["per_lesson"]["a"] == pytest.approx(0.75)
    session = StudySession(store, _deck(), lesson_order={})
    for answer in _report().answers:
        iv.feed_schedule(session, answer)
    ratings = dict(store.conn.execute("SELECT card_id, rating FROM review_log WHERE mode = 'interview'").fetchall())
    assert ratings == {"t.a1": 3, "q.a": 2, "t.b1": 1}  # right Good, half Hard, skipped Again; katas have no card


def _points(*scores):
    return [trend.TrendPoint(f"2026-01-{i + 1:02d}T09:00:00Z", s, 4, r) for i, (s, r) in enumerate(scores)]


def test_trend_chart_text_puts_each_interview_in_its_column_and_row():
    text = trend.chart_text(_points((0.0, None), (0.5, 0.5), (1.0, 0.25)), width=29, height=9)
    assert text.splitlines() == [
        "3 interviews: 0% → 100%",  # the long summary does not fit 29 columns
        "100%┤                      ●",
        "    │",
        " 50%┤           ◉",      # score and readiness both 50%: one marker says so
        "    │                      ○",  # readiness 25%: a quarter of the way up, rounded to a row
        "  0%┤●",
        "    └───────────────────────",
        "     2026-01-01   2026-01-03",
        "● score ○ readiness ◉ both",
    ]


@pytest.mark.parametrize("width,height", [(72, 12), (156, 40), (24, 10)])
def test_trend_chart_text_of_one_or_many_interviews_fits(width, height):
    for past in (_points((0.7, 0.3)), _points(*[(i / 30, None) for i in range(31)]), []):
        lines = trend.chart_text(past, width, height).splitlines()
        assert len(lines) <= height and all(len(line) <= width for line in lines)
    one = trend.chart_text(_points((0.7, 0.3)), width, height)
    assert one.count(trend.SCORE) == 2 and one.count(trend.READINESS) == 2  # the point, the legend


def test_an_interview_day_scopes_the_lessons_and_is_said_in_words():
    from datetime import date

    assert iv.in_scope(["a", "b", "c"], ("c", "a", "z")) == ["a", "c"]  # course order kept
    assert iv.in_scope(["a", "b"], ("z",)) == ["a", "b"] and iv.in_scope(["a"], ()) == ["a"]
    today = date(2026, 12, 1)
    assert iv.day_line(None, today) == ""
    assert iv.day_line(date(2026, 12, 20), today) == "Interview day 2026-12-20, in 19 days"
    assert iv.day_line(today, today).endswith(", today")
    assert iv.day_line(date(2026, 11, 30), today).endswith(", 1 day ago")
