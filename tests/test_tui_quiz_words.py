"""The quiz screen's words at 80×24: each mode described, the header leaves "choose" once
answered, a right typed answer shows no diff legend, every missed answer shown in full, and
ctrl+f flags a question out of the score (with a note, stored in the progress database)."""

from __future__ import annotations

from textual.widgets import Input, OptionList, Static

from minigpt.study import flags
from minigpt.study.formats import FORMATS, QUIZ_MODES
from minigpt.study.quiz import formats_for
from minigpt.study.review import history
from tui.study.quiz import QuizScreen
from tui.study.study_quiz import VIEWS, TypedView


def _status(screen) -> str:
    return str(screen.query_one("#quiz-status", Static).render())


async def _open_quiz(app, pilot) -> QuizScreen:
    await pilot.pause()
    await pilot.press("q")
    await pilot.pause()
    assert isinstance(app.screen, QuizScreen)
    return app.screen


def test_every_format_has_a_widget():
    assert set(VIEWS) == set(FORMATS)


def test_views_are_keyed_by_the_registry_ids():
    """Each quiz mode of minigpt.study.formats that is a format has its view; one that mixes
    formats (the chapter quiz) shows theirs."""
    for mode in QUIZ_MODES.values():
        assert (mode.id in VIEWS) == mode.is_format, mode.id


async def test_picker_describes_each_mode_in_one_line(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_quiz(app, pilot)
        picker = screen.query_one("#quiz-modes", OptionList)
        assert picker.option_count == len(QUIZ_MODES)
        for i, mode in enumerate(QUIZ_MODES.values()):
            prompt = str(picker.get_option_at_index(i).prompt)
            assert mode.title in prompt and mode.description in prompt
            assert len(mode.description) <= 72  # one line at 80 columns, indented


async def test_chapter_header_leaves_choose_once_answered(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_quiz(app, pilot)
        screen.start_chapter("query-key-value")
        await pilot.pause()
        for _ in range(len(screen.questions)):
            if screen.view.question.format == "choice":
                break
            screen.state = "answered"
            screen.action_next()
            await pilot.pause()
        assert screen.view.question.format == "choice"
        assert "choose" in _status(screen)
        await pilot.press(str(screen.view.question.answer_index + 1))
        await pilot.pause()
        assert "choose" not in _status(screen)


async def test_right_typed_answer_shows_no_diff_legend(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_quiz(app, pilot)
        await pilot.press("2")
        await pilot.pause()
        view = screen.view
        assert isinstance(view, TypedView)
        view.query_one("#answer", Input).value = view.question.card.expected
        await pilot.press("enter")
        await pilot.pause()
        text = str(view.query_one("#feedback", Static).render())
        assert "✓ Right" in text and "Diff" not in text and "missing" not in text


async def test_missed_answers_are_shown_in_full_at_80x24(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_quiz(app, pilot)
        await pilot.press("1")
        await pilot.pause()
        missed = []
        for _ in screen.questions:
            view = screen.view
            missed.append(view.question)
            await pilot.press(str(next(i for i, o in enumerate(view.question.options)
                                       if not o.correct) + 1))
            await pilot.press("n")
            await pilot.pause()
        done = " ".join(str(screen.query_one("#quiz-done", Static).render()).split())
        for question in missed:
            assert " ".join(question.right_answer.split()) in done, question.right_answer


async def test_flag_a_question_takes_it_out_of_the_score(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_quiz(app, pilot)
        await pilot.press("1")
        await pilot.pause()
        view = screen.view
        card_id = view.question.card_id
        await pilot.press(str(view.question.answer_index + 1))
        await pilot.pause()
        assert "score 1" in _status(screen) and len(history(app.store)) == 1
        await pilot.press("ctrl+f")
        await pilot.pause()
        note = app.screen.query_one("#flag-note", Input)
        note.value = "two options are right"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen
        assert "score 0" in _status(screen) and "1 flagged" in _status(screen)
        assert history(app.store) == []  # the answer left the schedule too
        (flag,) = flags.flags(app.store)
        assert flag.card_id == card_id and flag.note == "two options are right"
        assert card_id not in screen.session.queue()


async def test_flashcards_flag_key_takes_the_card_out_of_the_queue(tmp_path, make_app):
    from tui.study.flashcards import FlashcardsScreen

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()
        cards = app.screen
        assert isinstance(cards, FlashcardsScreen)
        first = cards.current
        await pilot.press("f")
        await pilot.pause()
        await pilot.press("enter")  # no note: the note is optional
        await pilot.pause()
        assert app.screen is cards and cards.current != first
        assert [f.card_id for f in flags.flags(app.store)] == [first]
        assert first not in cards.session.queue()


async def test_a_round_asks_no_flagged_card(tmp_path, make_app):
    """The number format's generative draws and the chapter quiz alike come from the cards left in
    play: with every number card but one flagged, a round asks that one alone."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open_quiz(app, pilot)
        numeric = [c.id for c in screen.session.deck if "numeric" in formats_for(c)]
        for card_id in numeric[1:]:
            flags.flag_card(app.store, card_id)
        screen.start_mode("numeric")
        await pilot.pause()
        assert [x.card_id for x in screen.questions] == numeric[:1]
        lesson = screen.session.deck[numeric[1]].lesson
        screen.start_chapter(lesson)
        await pilot.pause()
        assert not {x.card_id for x in screen.questions} & set(numeric[1:])
