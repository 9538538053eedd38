"""Every input the app grades or stores is capped (issue 44 item 5; round 4, row 10: a pasted
megabyte froze the quiz for two minutes, 19 s of it in ``match_answer`` on the app's thread).

The library cuts a typed answer to MAX_ANSWER_CHARS before grading it and the review log keeps
at most MAX_LOGGED_ANSWER_CHARS; the app's answer box stops at the first and says what it cut.
"""

from __future__ import annotations

import pytest
from textual import events
from textual.widgets import Input, Static

from minigpt.study import matching, quiz
from minigpt.study.decks import load_decks
from minigpt.study.matching import MAX_ANSWER_CHARS, match_answer
from minigpt.study.review import MAX_LOGGED_ANSWER_CHARS, StudySession, history
from tests.helpers.waiting import until
from tui.study.quiz import QuizScreen
from tui.study.study_quiz import TypedView

MEGABYTE = "a" * 1_000_000


def _refuse_long(real, what: str):
    def checked(*args):
        assert all(len(a) <= MAX_ANSWER_CHARS for a in args if isinstance(a, str)), f"{what} of a long answer"
        return real(*args)
    return checked


def test_grading_cuts_a_pasted_megabyte_before_measuring_it(monkeypatch):
    monkeypatch.setattr(matching, "edit_distance", _refuse_long(matching.edit_distance, "edit distance"))
    monkeypatch.setattr(matching, "char_diff", _refuse_long(matching.char_diff, "diff"))
    result = match_answer(MEGABYTE, "layer normalization", rivals=("batch normalization", "attention"))
    assert result.verdict == "wrong"
    assert sum(len(text) for op, text in result.diff if op == "delete") <= MAX_ANSWER_CHARS


def test_a_right_answer_is_still_right_under_the_cap():
    assert match_answer("layer normalisation", "layer normalization").verdict == "exact"
    assert match_answer("x" * MAX_ANSWER_CHARS + "layer normalization", "layer normalization").verdict == "wrong"


def test_a_cloze_with_a_megabyte_in_each_blank_is_graded_on_the_cut(monkeypatch):
    monkeypatch.setattr(matching, "edit_distance", _refuse_long(matching.edit_distance, "edit distance"))
    deck = load_decks()
    card = next(c for c in deck if c.kind == "cloze" and len(c.cloze_answers) > 1)
    question = quiz.question_for(deck, card, fmt="type")
    outcome = quiz.QUIZ_MODES["type"].grade(question, "/".join([MEGABYTE] * len(card.cloze_answers)))
    assert not outcome.correct


def test_the_review_log_keeps_at_most_the_cap(tmp_path):
    from minigpt.store import Store

    deck = load_decks()
    session = StudySession(Store(tmp_path / "p.sqlite3"), deck)
    card = next(iter(deck))
    session.rate(card.id, 1, answer=MEGABYTE * 2, mode="quiz:type")
    assert len(history(session.store)[-1]["answer"]) == MAX_LOGGED_ANSWER_CHARS


async def test_a_pasted_megabyte_is_cut_and_said_and_the_quiz_answers_at_once(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("q")
        await until(pilot, lambda: isinstance(app.screen, QuizScreen), describe="the quiz screen")
        await pilot.press("2")  # type the term
        await until(pilot, lambda: isinstance(getattr(app.screen, "view", None), TypedView),
                    describe="a typed question")
        view = app.screen.view
        field = view.query_one("#answer", Input)
        field.focus()
        field.post_message(events.Paste(MEGABYTE))
        await until(pilot, lambda: field.value, describe="the paste in the box")
        assert len(field.value) == MAX_ANSWER_CHARS
        error = str(view.query_one("#answer-error", Static).render())
        assert "Too long" in error and f"{len(MEGABYTE) - MAX_ANSWER_CHARS:,} left out" in error
        await pilot.press("enter")
        await until(pilot, lambda: view.outcome is not None, describe="the answer graded")
        assert "✗ Wrong" in str(view.query_one("#feedback", Static).render())
        assert len(history(app.store)[-1]["answer"]) == MAX_ANSWER_CHARS


def test_scoring_a_pasted_megabyte_is_refused_in_a_short_line():
    """The playground's scored name: refused before it is encoded, the message naming its length,
    never echoing the megabyte."""
    from minigpt.checkpoint import load_checkpoint
    from minigpt.errors import SamplingError
    from minigpt.paths import default_checkpoint
    from minigpt.sampling import generate, score_word

    ckpt = load_checkpoint(default_checkpoint())
    for call in (lambda: score_word(ckpt.model, ckpt.vocab, MEGABYTE),
                 lambda: generate(ckpt.model, ckpt.vocab, n=1, prefix="." + MEGABYTE),
                 lambda: generate(ckpt.model, ckpt.vocab, n=1, prefix="ж" + MEGABYTE)):
        try:
            call()
        except SamplingError as e:
            assert len(str(e)) < 300 and "1,000,00" in str(e), str(e)[:300]
        else:
            raise AssertionError("a megabyte was accepted")


@pytest.mark.soak  # the default tier checks the boxes' caps in tests/test_tui_study_plan.py (no extra boot)
async def test_the_plan_screen_stores_no_pasted_megabyte(make_app):
    from minigpt.study import plan

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s")
        await until(pilot, lambda: type(app.screen).__name__ == "StudyStatsScreen", describe="the study stats")
        await pilot.press("i")
        await until(pilot, lambda: type(app.screen).__name__ == "StudyPlanScreen", describe="the plan screen")
        for box in ("#plan-lessons", "#plan-date"):
            field = app.screen.query_one(box, Input)
            field.focus()
            field.post_message(events.Paste(MEGABYTE))
            await pilot.pause()
            assert len(field.value) <= field.max_length < 10_000
        await pilot.press("enter")
        await pilot.pause()
        _day, lessons = plan.plan_settings(app.store)
        assert sum(len(x) for x in lessons) < 10_000
