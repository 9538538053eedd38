"""Mock interviews (minigpt.study.interview): the selection weights and plan on a seeded session,
the report, its storage and trend, and misses fed to the flashcard schedule."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from minigpt.store import Store
from minigpt.study import interview, interview_trend, numeric
from minigpt.study.cards import Deck, StudyCard
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
    assert interview.lesson_weights(["a", "b"], {"a": 0.9, "b": 0.1}) == pytest.approx({"a": 0.2, "b": 1.0})
    counts = Counter(interview.plan(_deck(), ["a", "b"], {"a": 0.9, "b": 0.1}, seed=seed)[0].lesson
                     for seed in range(300))  # the first draw: 1.0 : 0.2, so b about 5 times in 6
    assert counts["b"] > 3 * counts["a"] > 0


def test_seeded_plan_mixes_kinds_from_read_lessons_only():
    plan = interview.plan(_deck(), ["a", "b"], {"a": 0.5, "b": 0.5}, minutes=10, seed=3,
                   katas_by_lesson={"b": ["softmax"]}, allow_code=True)
    assert interview.question_count(10) == 4 and len(plan) == 4
    assert {q.lesson for q in plan} <= {"a", "b"}          # c is not read
    assert len({q.card_id or q.kata for q in plan}) == 4    # nothing twice
    assert len({q.kind for q in plan}) >= 3                  # kinds turned round
    assert sum(q.kind == "kata" for q in plan) <= 1
    define = [q for q in plan if q.kind == "define"]
    assert all(q.prompt == f"Define “{_deck()[q.card_id].term}”." and not q.kata for q in define)
    assert all(q.rubric for q in plan if q.kind == "explain")
    assert plan == interview.plan(_deck(), ["a", "b"], {"a": 0.5, "b": 0.5}, minutes=10, seed=3,
                           katas_by_lesson={"b": ["softmax"]}, allow_code=True)  # seeded: repeatable
    compute = [q for q in plan if q.kind == "compute"]
    for q in compute:  # a fresh instance, graded by the one parser against its own inputs
        want = q.params["peak"] * q.params["step"] / q.params["warmup"]
        assert interview.grade_compute(_deck(), q, repr(want)).correct
    no_code = interview.plan(_deck(), ["a", "b"], {}, minutes=30, seed=3, katas_by_lesson={"b": ["softmax"]})
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
        plan = interview.plan(deck, ["a", "b"], figures, minutes=10, seed=seed,
                       katas_by_lesson={"b": ["softmax"]}, allow_code=True)
        return [(q.kind, q.lesson, q.card_id or q.kata, q.params) for q in plan]

    assert asked(7) == [  # two each: no lesson past its fair share while the other has questions
        ("define", "a", "t.a1", {}),
        ("explain", "a", "q.a", {}),
        ("kata", "b", "softmax", {}),
        ("define", "b", "t.b1", {}),
    ]
    assert asked(8) == [
        ("define", "a", "t.a2", {}),
        ("explain", "a", "q.a", {}),
        ("kata", "b", "softmax", {}),
        ("define", "b", "t.b1", {}),
    ]
    assert asked(7) == asked(7)  # nothing from the clock, nor from set or hash order
    compute = next(q for q in interview.plan(deck, ["a"], figures, minutes=10, seed=7) if q.kind == "compute")
    assert compute.params == {"peak": 0.003, "warmup": 500, "step": 50}  # the template's draw
    assert compute.prompt == numeric.generate("warmup_lr", compute.params).prompt
    assert compute.note == "within 1% of the answer"  # shown with the question


def _report() -> interview.Report:
    q = interview.Question
    return interview.Report(10, [
        interview.Answer(q("define", "a", "t.a1", prompt="What is alpha one?", answer="the first"), 1.0, 30),
        interview.Answer(q("explain", "a", "q.a", prompt="Why a?", answer="because", rubric=("point one", "point two")),
                  0.5, 90, missed=("point two",)),
        interview.Answer(q("define", "b", "t.b1", prompt="What is beta one?", answer="the b"), 0.0, 12, skipped=True),
        interview.Answer(q("kata", "b", kata="softmax"), 1.0, 240),
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
    assert interview_trend.points(store) == [] and interview_trend.summary([]) == ""
    interview.save(store, interview.Report(5, [interview.Answer(interview.Question("define", "a", "t.a1"), 0.0, 3)]),
            "2026-01-01T09:00:00Z", "x")  # a report from before readiness was recorded
    report = _report()
    report.readiness = 0.4
    interview.save(store, report, "2026-01-02T09:00:00Z", "y")
    assert interview_trend.points(store) == [interview_trend.TrendPoint("2026-01-01T09:00:00Z", 0.0, 1, None),
                                   interview_trend.TrendPoint("2026-01-02T09:00:00Z", 0.625, 4, 0.4)]
    assert interview_trend.summary(interview_trend.points(store)) == "2 interviews: 0% on 2026-01-01 → 62% on 2026-01-02"
    saved = json.loads(store.conn.execute("SELECT report FROM interview ORDER BY id DESC").fetchone()[0])
    assert saved["per_lesson"]["a"] == pytest.approx(0.75)
    session = StudySession(store, _deck(), lesson_order={})
    for answer in _report().answers:
        interview.feed_schedule(session, answer)
    ratings = dict(store.conn.execute("SELECT card_id, rating FROM review_log WHERE mode = 'interview'").fetchall())
    assert ratings == {"t.a1": 3, "q.a": 2, "t.b1": 1}  # right Good, half Hard, skipped Again; katas have no card


def _points(*scores):
    return [interview_trend.TrendPoint(f"2026-01-{i + 1:02d}T09:00:00Z", s, 4, r) for i, (s, r) in enumerate(scores)]


def test_trend_chart_text_puts_each_interview_in_its_column_and_row():
    text = interview_trend.chart_text(_points((0.0, None), (0.5, 0.5), (1.0, 0.25)), width=29, height=9)
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
        lines = interview_trend.chart_text(past, width, height).splitlines()
        assert len(lines) <= height and all(len(line) <= width for line in lines)
    one = interview_trend.chart_text(_points((0.7, 0.3)), width, height)
    assert one.count(interview_trend.SCORE) == 2 and one.count(interview_trend.READINESS) == 2  # the point, the legend


def test_an_interview_day_scopes_the_lessons_and_is_said_in_words():
    from datetime import date

    assert interview.in_scope(["a", "b", "c"], ("c", "a", "z")) == ["a", "c"]  # course order kept
    assert interview.in_scope(["a", "b"], ("z",)) == ["a", "b"] and interview.in_scope(["a"], ()) == ["a"]
    today = date(2026, 12, 1)
    assert interview.day_line(None, today) == ""
    assert interview.day_line(date(2026, 12, 20), today) == "Interview day 2026-12-20, in 19 days"
    assert interview.day_line(today, today).endswith(", today")
    assert interview.day_line(date(2026, 11, 30), today).endswith(", 1 day ago")


def test_no_concept_is_asked_twice_in_any_form():
    """A term, its reverse sibling and a question naming the term are one concept: one is asked."""
    cards = [
        StudyCard("t.p", "term", "a", "P?", "def", term="Attention Is All You Need", definition="the paper",
                  aliases=("the transformer paper",), note="paper"),
        StudyCard("r.p", "reverse", "a", "the paper", "Attention Is All You Need", term="Attention Is All You Need",
                  note="paper"),
        StudyCard("q.p", "question", "a", "What did “Attention Is All You Need” contribute?", "much",
                  checklist=("x",)),
        StudyCard("q.other", "question", "a", "Why scale by the square root?", "variance", checklist=("y",)),
        StudyCard("t.other", "term", "a", "O?", "def", term="softmax", definition="a squash"),
    ]
    deck = Deck({c.id: c for c in cards}, [])
    assert interview.same_concept(cards[0], cards[1]) and interview.same_concept(cards[2], cards[0])  # sibling; named
    assert not interview.same_concept(cards[0], cards[3]) and not interview.same_concept(cards[4], cards[3])
    for seed in range(40):
        asked = {q.card_id for q in interview.plan(deck, ["a"], {}, minutes=10, seed=seed)}
        assert not {"t.p", "q.p"} <= asked  # before: the paper's question and its term in one interview


def test_one_lesson_takes_no_more_than_its_fair_share_while_others_have_questions():
    assert interview.fair_share(4, 2) == 2 and interview.fair_share(12, 3) == 5 and interview.fair_share(4, 1) == 4
    assert interview.fair_share(12, 12) == 2
    cards = [StudyCard(f"t.a{i}", "term", "a", "?", "d", term=f"alpha {i}", definition="d") for i in range(8)]
    cards += [StudyCard("t.b", "term", "b", "?", "d", term="beta", definition="d"),
              StudyCard("q.b", "question", "b", "Why does b hold?", "b", checklist=("p",)),
              StudyCard("t.c", "term", "c", "?", "d", term="gamma", definition="d")]
    deck = Deck({c.id: c for c in cards}, [])
    for seed in range(30):  # a is the weakest by far, yet asks at most half of four questions
        lessons = Counter(q.lesson for q in interview.plan(deck, ["a", "b"], {"a": 0.0, "b": 1.0}, minutes=10, seed=seed))
        assert lessons == {"a": 2, "b": 2}
        lessons = Counter(q.lesson for q in interview.plan(deck, ["a", "c"], {"a": 0.0, "c": 1.0}, minutes=10, seed=seed))
        assert lessons == {"a": 3, "c": 1}  # c has one question: a fills the rest past its share


def test_the_time_column_stays_aligned_past_nine_questions():
    q = interview.Question("define", "a", "t.a1")
    lines = interview.Report(30, [interview.Answer(q, 1.0, 5) for _ in range(11)]).text().splitlines()
    rows = lines[lines.index("Time per question") + 1:][:11]
    assert rows[8].startswith("   9. Define") and rows[9].startswith("  10. Define")
    assert len({row.index("s ") for row in rows}) == 1  # the seconds end in one column


def test_an_interview_ended_early_stays_out_of_the_trend_unless_kept(tmp_path):
    store = Store(tmp_path / "p.sqlite3")
    q = interview.Question("define", "a", "t.a1")
    interview.save(store, interview.Report(10, [interview.Answer(q, 1.0, 3, typed="the first")]), "2026-01-01T09:00:00Z", "x")
    early = interview.Report(30, [interview.Answer(q, 0.0, 3, typed="no idea"), interview.Answer(q, 0.0, 4)], partial=True)
    assert "(ended early)" in early.text().splitlines()[0]
    kept_id = interview.save(store, early, "2026-01-02T09:00:00Z", "y")
    assert [p.score for p in interview_trend.points(store)] == [1.0]  # before: 2 interviews, 100% → 0%
    interview.keep_in_trend(store, kept_id)
    assert [p.score for p in interview_trend.points(store)] == [1.0, 0.0]
    assert interview.typed_answers(store, kept_id) == {1: "no idea"}  # what was typed is kept, question by question
    row = store.conn.execute("SELECT partial, report FROM interview WHERE id = ?", (kept_id,)).fetchone()
    assert row["partial"] == 1 and json.loads(row["report"])["partial"] is True


def test_a_paused_interview_resumes_once_with_its_time_left(tmp_path):
    from minigpt.study import interview_pause

    store = Store(tmp_path / "p.sqlite3")
    plan = interview.plan(_deck(), ["a", "b"], {}, minutes=10, seed=3)
    report = interview.Report(10, [interview.Answer(plan[0], 0.5, 20, missed=("point two",), typed="my words")],
                       {"a": "Lesson A"}, readiness=0.3)
    interview_pause.pause(store, interview_pause.Paused("2026-01-01T09:00:00Z", "2026-01-01T09:04:10Z", 350.0, report, plan, 1, "half an"))
    assert interview_pause.paused(store).line() == "05:50 left · question 2 of 4 · paused 2026-01-01"
    back = interview_pause.resume(store)
    assert back.questions == plan and back.index == 1 and back.draft == "half an" and back.seconds_left == 350
    assert back.report.answers == report.answers and back.report.readiness == 0.3
    assert interview_pause.resume(store) is None and interview_pause.paused(store) is None  # resumed once
    store.conn.execute("INSERT INTO interview_pause VALUES (1, 'a', 'b', 5, '{not json')")
    assert interview_pause.paused(store) is None  # a row that does not read is not resumed half-way


def test_a_database_saved_by_the_previous_release_is_upgraded(tmp_path):
    """A progress file at schema 5 (the release before paused and partial interviews), with one
    interview kept: migration 6 keeps it in the trend and adds the new tables."""
    import sqlite3

    from minigpt.store import MIGRATIONS

    path = tmp_path / "p.sqlite3"
    conn = sqlite3.connect(path)
    for number, sql in enumerate(MIGRATIONS[:5], start=1):
        conn.executescript(sql)
        conn.execute(f"PRAGMA user_version = {number}")
    conn.execute("INSERT INTO interview(started_at, finished_at, minutes, questions, score, report) "
                 "VALUES ('2026-01-01T09:00:00Z', 'x', 10, 4, 0.5, '{}')")
    conn.commit()
    conn.close()
    store = Store(path)
    assert store.version == len(MIGRATIONS) >= 6
    assert (tmp_path / "p.sqlite3.schema-5.bak").exists()
    assert [p.score for p in interview_trend.points(store)] == [0.5]  # an old interview stays in the trend
    assert tuple(store.conn.execute("SELECT partial, in_trend FROM interview").fetchone()) == (0, 1)
    interview.save(store, interview.Report(10, [interview.Answer(interview.Question("define", "a", "t.a1"), 1.0, 3, typed="x")],
                             partial=True), "2026-01-02T09:00:00Z", "y")
    assert store.conn.execute("SELECT COUNT(*) FROM interview_answer").fetchone()[0] == 1
    assert store.conn.execute("SELECT COUNT(*) FROM interview_pause").fetchone()[0] == 0
