"""The mock interview screen driven with Pilot at 80×24: length, every question kind answered,
the report, the saved row, answers in the flashcard schedule, and readiness moving."""

from __future__ import annotations

import pytest

from minigpt.store import Store
from minigpt.study import readiness
from tests.helpers.waiting import until


async def test_a_short_interview_from_home_to_report(tmp_path, make_app):
    store = Store(tmp_path / "p.sqlite3")
    store.save_lesson_position("causal-masking", 1.0, reached_end=True)  # the one lesson read
    before = {x.lesson: x.figure for x in readiness.readiness_for_store(store, {}).lessons}
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("i")
        await until(pilot, lambda: type(app.screen).__name__ == "InterviewScreen")
        screen = app.screen
        await pilot.press("5", "enter")
        await until(pilot, lambda: screen.state == "asking")
        assert screen.minutes == 5 and len(screen.questions) == 3
        assert {q.lesson for q in screen.questions} == {"causal-masking"}
        assert "⏱ 0" in str(screen.query_one("#iv-status").render())
        kinds = []
        while screen.state != "report":
            q = screen.questions[screen.index]
            kinds.append(q.kind)
            if q.kind == "kata":
                await pilot.press("ctrl+n")
            else:  # an explanation gets a multi-line box: enter is a new line there, ctrl+s reveals
                await pilot.press(*"12", "ctrl+s" if q.kind == "explain" else "enter")
                await until(pilot, lambda: screen.state == "revealed")
                if q.kind == "define":
                    await pilot.press("y")
                elif q.kind == "explain":
                    await pilot.press("1", "enter")
                else:
                    await pilot.press("enter")
            await pilot.pause()
        assert len(kinds) == 3 and len(set(kinds)) >= 2
        text = str(screen.query_one("#iv-body").children[0].render())
        assert "Time per question" in text and "By kind" in text
    rows = store.conn.execute("SELECT questions, minutes FROM interview").fetchall()
    assert [tuple(r) for r in rows] == [(3, 5.0)]
    rated = store.conn.execute("SELECT COUNT(*) FROM review_log WHERE mode = 'interview'").fetchone()[0]
    assert rated == sum(k != "kata" for k in kinds)
    after = {x.lesson: x.figure for x in readiness.readiness_for_store(store, {}).lessons}
    assert after["causal-masking"] > before["causal-masking"]  # its cards now have a memory


async def test_escape_asks_and_an_interview_ended_early_stays_out_of_the_trend_unless_kept(tmp_path, make_app):
    from minigpt.study import interview_trend
    from tui.interview.interview_end import EndInterviewQuestion

    store = Store(tmp_path / "p.sqlite3")
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        from tui import navigation

        navigation.open_screen(app, "interview", 30, seed=1)
        screen = app.screen
        await until(pilot, lambda: screen.state == "asking")
        assert len(screen.questions) == 12  # 30 minutes, 2.5 each
        await pilot.press("ctrl+n")  # skip one
        await pilot.press("escape")  # before: it ended at once; now it asks
        await until(pilot, lambda: isinstance(app.screen, EndInterviewQuestion))
        assert screen.state == "asking"
        await pilot.press("enter")  # "Keep going" is focused: a stray enter changes nothing
        await until(pilot, lambda: app.screen is screen)
        assert screen.state == "asking" and len(screen.report.answers) == 1
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, EndInterviewQuestion))
        await pilot.press("e")  # end now
        await until(pilot, lambda: screen.state == "report")
        assert "k keeps it in your trend" in str(screen.query_one("#iv-status").render())
        assert interview_trend.points(store) == []  # ended early: not a point on the trend
        await pilot.press("k")
        await until(pilot, lambda: len(interview_trend.points(store)) == 1)
        assert not screen.check_action("keep", ()) and "(ended early)" in screen.report.text()
    assert tuple(store.conn.execute("SELECT questions, partial, in_trend FROM interview").fetchone()) == (1, 1, 1)


def _keep(store, *scores):
    from minigpt.study import interview

    for day, score in enumerate(scores, 1):
        answers = [interview.Answer(interview.Question("define", "a", "t.a"), score, 5)]
        interview.save(store, interview.Report(10, answers, readiness=score / 2), f"2026-01-{day:02d}T08:00:00Z", "x")


async def test_one_past_interview_is_charted_without_a_crash(tmp_path, make_app):
    from tui import navigation
    from tui.interview.interview_trend import InterviewTrendChart

    store = Store(tmp_path / "p.sqlite3")
    _keep(store, 0.5)  # one point: plotext once divided by an empty range
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        navigation.open_screen(app, "interview")
        await until(pilot, lambda: bool(app.screen.query(InterviewTrendChart)))
        chart = app.screen.query_one(InterviewTrendChart)
        await until(pilot, lambda: chart.size.height >= 10)
        await pilot.pause()
        assert chart.drawn == {"score": ([1], [50.0]), "readiness": ([1], [25.0])}
        assert chart.chart_title == "1 interview: 50%"
        rendered = chart.render()  # plotext builds the frame here: it must not raise
        assert "50%" in str(rendered) and "01-01" in str(rendered)
        assert type(app.screen).__name__ == "InterviewScreen"


async def test_the_report_charts_every_interview_at_160_by_48(tmp_path, make_app):
    from tui import navigation
    from tui.interview.interview_trend import InterviewTrendChart

    store = Store(tmp_path / "p.sqlite3")
    store.save_lesson_position("causal-masking", 1.0, reached_end=True)
    _keep(store, 0.25, 0.5, 0.5, 0.75)
    app = make_app(store=store)
    async with app.run_test(size=(160, 48)) as pilot:
        navigation.open_screen(app, "interview", 5, seed=2)
        screen = app.screen
        await until(pilot, lambda: screen.state == "asking")
        await pilot.press("ctrl+g")  # ends at once: nothing answered, nothing kept
        await until(pilot, lambda: screen.state == "report")
        await until(pilot, lambda: bool(screen.query(InterviewTrendChart)))
        chart = screen.query_one(InterviewTrendChart)
        await until(pilot, lambda: chart.size.width > 100)
        await pilot.pause()
        assert chart.drawn["score"] == ([1, 2, 3, 4], [25.0, 50.0, 50.0, 75.0])
        text = str(chart.render())
        assert "01-01" in text and "01-04" in text and "100%" in text


def test_date_ticks_are_thinned_to_the_width_and_keep_the_last_interview():
    from minigpt.study.interview_trend import TrendPoint
    from tui.interview.interview_trend import date_ticks

    past = [TrendPoint(f"2026-03-{1 + i // 2:02d}T0{i % 2}:00:00Z", 0.5, 4) for i in range(20)]  # two a day
    xs, labels = date_ticks(past, 40)
    assert len(xs) <= 4 and xs[-1] == 20 and labels[-1] == "03-10"
    assert len(set(labels)) == len(labels) and xs == sorted(xs)
    assert date_ticks(past[:1], 80) == ([1], ["03-01"]) and date_ticks([], 80) == ([], [])


async def test_an_unreadable_compute_answer_is_said_and_not_graded(tmp_path, make_app):
    from textual.widgets import Input

    from tui import navigation

    store = Store(tmp_path / "p.sqlite3")
    store.save_lesson_position("multi-head-attention", 1.0, reached_end=True)
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        navigation.open_screen(app, "interview", 10, seed=4)
        screen = app.screen
        await until(pilot, lambda: screen.state == "asking")
        screen.index = next(i for i, q in enumerate(screen.questions) if q.kind == "compute")
        screen.ask()
        await until(pilot, lambda: bool(screen.query(".iv-answer")))
        field = screen.query_one(".iv-answer", Input)
        for typed in ("", "about seven"):  # enter by mistake, or words: the question stays
            field.value = typed
            await pilot.press("enter")
            await pilot.pause()
            assert screen.state == "asking" and screen.report.answers == [] and field.value == typed
        note = str(screen.query_one(".iv-note").render())
        assert note.startswith(("Exact", "Within"))  # how exact to be, said with the question


async def _interview(pilot, app, store, minutes=10, seed=0):
    """An interview on causal-masking (seed 0: define, explain, kata, define), its screen asking."""
    from tui import navigation

    navigation.open_screen(app, "interview", minutes, seed=seed)
    screen = app.screen
    # The answer box takes focus a refresh after it mounts: keys pressed before that (a busy
    # machine) would go to the screen, so wait for the focus as well as the box.
    await until(pilot, lambda: screen.state == "asking" and app.focused is not None and app.focused.has_class("iv-answer"))
    assert [q.kind for q in screen.questions] == ["define", "explain", "kata", "define"]
    return screen


def _read_causal_masking(tmp_path) -> Store:
    store = Store(tmp_path / "p.sqlite3")
    store.save_lesson_position("causal-masking", 1.0, reached_end=True)
    return store


async def test_the_typed_answer_stays_beside_the_model_answer_and_explain_gets_lines(tmp_path, make_app):
    from textual.widgets import TextArea

    from minigpt.study import interview
    from tui.interview.interview_end import EndInterviewQuestion

    store = _read_causal_masking(tmp_path)
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _interview(pilot, app, store)
        await pilot.press(*"a mask", "enter")
        await until(pilot, lambda: screen.state == "revealed")
        assert "a mask" in str(screen.query_one(".iv-yours").render())  # before: thrown away
        assert "Definition" in str(screen.query_one(".iv-model").render())
        await pilot.press("y")
        await until(pilot, lambda: bool(screen.query(TextArea)))
        await pilot.press("a", "enter", "b")  # enter is a new line in the explanation box
        await until(pilot, lambda: screen.query_one(TextArea).text == "a\nb")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: screen.state == "revealed")
        yours, rubric = (str(w.render()) for w in screen.query_one(".iv-side").children)
        assert "a\nb" in yours and "Rubric" in rubric  # the points ticked beside the answer typed
        await pilot.press("1", "enter")
        await until(pilot, lambda: screen.index == 2)
        await pilot.press("s")  # a plain key skips (ctrl+n is kept by browsers)
        await until(pilot, lambda: screen.index == 3)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, EndInterviewQuestion))
        await pilot.press("e")
        await until(pilot, lambda: screen.state == "report")
    assert [a.skipped for a in screen.report.answers] == [False, False, True]
    assert interview.typed_answers(store, screen.saved_id) == {1: "a mask", 2: "a\nb"}


async def test_a_paused_interview_resumes_with_its_time_left_and_the_answer_typed(tmp_path, make_app):
    from dataclasses import replace

    from textual.widgets import Button, Input

    from minigpt.study import interview_pause
    from tui import navigation
    from tui.interview.interview import InterviewScreen

    store = _read_causal_masking(tmp_path)
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _interview(pilot, app, store)
        await pilot.press("h", "a", "l", "f", "escape")
        await until(pilot, lambda: app.screen is not screen)
        await pilot.press("p")
        await until(pilot, lambda: not isinstance(app.screen, InterviewScreen))
        paused = interview_pause.paused(store)
        assert paused.draft == "half" and paused.index == 0 and 590 < paused.seconds_left <= 600
        navigation.open_screen(app, "interview")
        again = app.screen
        await until(pilot, lambda: isinstance(app.focused, Button))
        assert "Resume (" in str(app.focused.label)
        await pilot.press("enter")
        await until(pilot, lambda: again.state == "asking" and bool(again.query(".iv-answer")))
        assert again.query_one(".iv-answer", Input).value == "half"
        await until(pilot, lambda: app.focused is again.query_one(".iv-answer", Input))
        await pilot.press("!")  # typed on after the draft (before: the draft was selected, then replaced)
        await until(pilot, lambda: again.query_one(".iv-answer", Input).value == "half!")
        assert again.questions == screen.questions and again.started_at == screen.started_at
        assert paused.seconds_left - 5 < again.seconds_left() <= paused.seconds_left
        assert interview_pause.paused(store) is None  # resumed once
        gone = interview_pause.Paused("s", "p", 100.0, again.report,
                                      [replace(q, card_id="term.gone") for q in again.questions])
        interview_pause.pause(store, gone)  # a card a deck no longer has: refused, never a crash
        await pilot.press("escape", "e", "escape")
        await until(pilot, lambda: not isinstance(app.screen, InterviewScreen))
        navigation.open_screen(app, "interview")
        third = app.screen
        await until(pilot, lambda: isinstance(app.focused, Button))
        await pilot.press("enter")
        await until(pilot, lambda: any("no longer in the decks" in n.message for n in app._notifications))
        assert third.state == "setup"


async def test_time_up_reveals_the_answer_in_progress_after_a_one_minute_notice(tmp_path, make_app):
    import time

    from minigpt.study import interview_trend

    store = _read_causal_masking(tmp_path)
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _interview(pilot, app, store)
        await pilot.press(*"a mask on")
        screen.started = time.monotonic() - (600 - 50)  # 50 s left
        screen.tick_clock()
        assert screen.warned
        await until(pilot, lambda: any("1 minute left" in n.message for n in app._notifications))
        screen.started = time.monotonic() - 601
        screen.tick_clock()
        await until(pilot, lambda: screen.state == "revealed")  # before: "No question answered."
        assert "a mask on" in str(screen.query_one(".iv-yours").render())
        await pilot.press("n")
        await until(pilot, lambda: screen.state == "report")
        assert "Time is up" in str(screen.query_one("#iv-status").render())
    assert [(a.typed, a.score) for a in screen.report.answers] == [("a mask on", 0.0)]
    assert len(interview_trend.points(store)) == 1  # the clock ended it: a whole interview


async def test_a_kata_in_an_interview_starts_from_the_stub_and_leaves_the_draft(tmp_path, make_app):
    from textual.widgets import TextArea

    from minigpt.katas import history
    from minigpt.katas.catalogue import kata_by_name

    store = _read_causal_masking(tmp_path)
    for name in ("attention", "causal_padding_mask"):  # the lesson's katas: the plan draws one
        history.save_draft(store, name, "# my passing practice code")
        history.record_attempt(store, name, passed=True, cases_failed=0, cases_total=5)
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _interview(pilot, app, store)
        drawn = screen.questions[2].kata
        screen.index = 2
        screen.ask()
        await until(pilot, lambda: screen.check_action("open_kata", ()))
        await pilot.press("o")
        await until(pilot, lambda: type(app.screen).__name__ == "KataScreen")
        kata = app.screen
        await until(pilot, lambda: kata.query_one(TextArea).text == kata_by_name(drawn).stub)
        await pilot.press("x")
        kata._save_draft()
        await pilot.press("escape", "escape")
        await until(pilot, lambda: app.screen is screen)
        await pilot.press("enter")  # before: the old passing draft, ctrl+r, a free point
        await until(pilot, lambda: screen.index == 3)
    assert history.record(store, drawn).draft == "# my passing practice code"
    kata_answer = screen.report.answers[-1]
    assert kata_answer.score == 0.0 and kata_answer.typed.startswith("x")


async def test_with_a_run_present_the_interview_asks_about_it_and_scores_its_rubric(tmp_path, make_app):
    from textual.widgets import TextArea

    from minigpt import paths
    from tests.helpers.run_fixtures import write_run

    write_run(paths.runs_dir(), "20260105-100200", steps=300, best_val=2.1)
    store = Store(tmp_path / "p.sqlite3")
    store.save_lesson_position("the-loss", 1.0, reached_end=True)
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        from tui import navigation

        navigation.open_screen(app, "interview", 10, seed=0)
        screen = app.screen
        await until(pilot, lambda: screen.state == "asking" and bool(screen.query(".iv-answer")))
        runs = [i for i, q in enumerate(screen.questions) if q.kind == "run"]
        assert runs and "nats per character" in screen.questions[runs[0]].prompt
        screen.index = runs[0]
        screen.ask()
        await until(pilot, lambda: bool(screen.query(TextArea)))
        await pilot.press(*"divide by ln 2")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: screen.state == "revealed")
        assert "Rubric" in str(screen.query_one(".iv-rubric").render())
        await pilot.press("1", "enter")
        await until(pilot, lambda: bool(screen.report.answers))
    answer = screen.report.answers[-1]
    assert answer.question.kind == "run" and answer.score == 1 / 3 and len(answer.missed) == 2


async def test_quitting_the_app_mid_interview_pauses_it_with_the_answer_typed(tmp_path, make_app):
    from minigpt.study import interview_pause

    store = _read_causal_masking(tmp_path)
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _interview(pilot, app, store)
        await pilot.press(*"shalf")  # s is a letter in the box, never a skip
        await until(pilot, lambda: screen.query_one(".iv-answer").value == "shalf")
        assert screen.index == 0 and screen.report.answers == []
        await pilot.press("ctrl+q")  # before: the interview was lost
    paused = interview_pause.paused(store)
    assert paused is not None and paused.draft == "shalf" and paused.index == 0
    assert 590 < paused.seconds_left <= 600


@pytest.mark.soak  # three app sessions: the default tier resumes an Input draft in the test above
async def test_after_quitting_a_resumed_draft_is_typed_on_in_both_kinds_of_box(tmp_path, make_app):
    from textual.widgets import Input, TextArea

    from minigpt.study import interview_pause

    store = _read_causal_masking(tmp_path)
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        await _interview(pilot, app, store)
        await pilot.press(*"half", "ctrl+q")
    assert interview_pause.paused(store).draft == "half"
    # the app opened again: resume, and type on after the draft (before: it was selected and replaced)
    await _resume_and_type(make_app(store=store), "!", Input, "half!", then_explain="ab")
    await _resume_and_type(make_app(store=store), "c", TextArea, "abc")


async def _resume_and_type(app, typed: str, box, kept: str, then_explain: str = "") -> None:
    """Resume the paused interview, type on, check the box holds ``kept``; with ``then_explain``,
    go on to the explanation and type that there; then quit the app."""
    from textual.widgets import Button, Input, TextArea

    from tui import navigation

    def text() -> str:
        field = screen.query_one(box)
        return field.value if isinstance(field, Input) else field.text

    async with app.run_test(size=(80, 24)) as pilot:
        navigation.open_screen(app, "interview")
        screen = app.screen
        await until(pilot, lambda: isinstance(app.focused, Button))
        await pilot.press("enter")
        await until(pilot, lambda: screen.state == "asking" and bool(screen.query(box)))
        await until(pilot, lambda: app.focused is screen.query_one(box))
        await pilot.press(typed)
        await until(pilot, lambda: text() == kept)
        if then_explain:
            await pilot.press("enter")
            await until(pilot, lambda: screen.state == "revealed")
            await pilot.press("y")
            await until(pilot, lambda: bool(screen.query(TextArea)) and app.focused is screen.query_one(TextArea))
            await pilot.press(*then_explain)
            await until(pilot, lambda: screen.query_one(TextArea).text == then_explain)
        await pilot.press("ctrl+q")


@pytest.mark.soak  # the default tier types s into the one-line box in the quitting test above
async def test_s_typed_into_an_answer_box_is_a_letter_never_a_skip(tmp_path, make_app):
    from textual.widgets import Input, TextArea

    store = _read_causal_masking(tmp_path)
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _interview(pilot, app, store)
        await pilot.press(*"ss")
        await until(pilot, lambda: screen.query_one(".iv-answer", Input).value == "ss")
        assert screen.index == 0 and screen.report.answers == []
        await pilot.press("enter")
        await until(pilot, lambda: screen.state == "revealed")
        await pilot.press("y")
        await until(pilot, lambda: bool(screen.query(TextArea)) and app.focused is screen.query_one(TextArea))
        await pilot.press(*"sums")  # the explanation box: every letter is text
        await until(pilot, lambda: screen.query_one(TextArea).text == "sums")
        assert screen.index == 1 and [a.skipped for a in screen.report.answers] == [False]
