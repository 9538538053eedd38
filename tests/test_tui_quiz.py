"""The quiz screen driven with Pilot: every mode, right and wrong, each answer in the review log
with its mode and the rating the library maps the outcome to."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Input, Static, TextArea

from minigpt.store import Store
from minigpt.study import quiz as q
from minigpt.study.review import history
from tui.app import TutorApp
from tui.screens.quiz import QuizScreen
from tui.widgets.study_quiz import Checklist, ChoiceView, ExplainView, TypedView


def _feedback(screen) -> str:
    return str(screen.view.query_one("#feedback", Static).render())


async def _start(app, pilot, digit: str) -> QuizScreen:
    await pilot.pause()
    await pilot.press("q")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, QuizScreen)
    await pilot.press(digit)
    await pilot.pause()
    return screen


def _last(app):
    return history(app.store)[-1]


async def test_multiple_choice_right_then_wrong_says_why(tmp_path):
    app = TutorApp(store=Store(tmp_path / "p.sqlite3"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(app, pilot, "1")
        view = screen.view
        assert isinstance(view, ChoiceView)
        right = view.question.answer_index
        await pilot.press(str(right + 1))
        assert _last(app)["mode"] == "quiz:choice" and _last(app)["rating"] == 3
        assert _last(app)["card_id"] == view.question.card_id
        assert "✓ Right" in _feedback(screen)
        await pilot.press("n")
        await pilot.pause()
        view = screen.view
        wrong = next(i for i, o in enumerate(view.question.options) if not o.correct)
        await pilot.press(str(wrong + 1))
        text = _feedback(screen)
        assert "✗ Wrong" in text and _last(app)["rating"] == 1
        for o in view.question.options:  # every wrong option explained
            if not o.correct:
                assert o.why in text
        assert "score 1" in str(screen.query_one("#quiz-status", Static).render())


async def test_type_the_term_diff_confusable_and_typo(tmp_path):
    app = TutorApp(store=Store(tmp_path / "p.sqlite3"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(app, pilot, "2")
        # Put a term with a confusable on screen (the library's question for it).
        card = next(c for c in screen.session.deck if c.kind == "reverse" and c.confusables)
        screen.questions = [q.question_for(screen.session.deck, card, fmt="type")] * 3
        screen.index = 0
        screen.show_question()
        await pilot.pause()
        assert isinstance(screen.view, TypedView)
        field = screen.view.query_one("#answer", Input)
        field.value = card.confusables[0]
        await pilot.press("enter")
        assert _last(app) == {**_last(app), "mode": "quiz:type", "rating": 1, "card_id": card.id}
        text = _feedback(screen)
        assert "✗ Wrong" in text and "different concept" in text and "Diff:" in text
        await pilot.press("n")
        await pilot.pause()
        field = screen.view.query_one("#answer", Input)
        term = card.term
        i = next(k for k in range(1, len(term)) if term[k].isalpha() and term[k] != term[k - 1])
        field.value = term[:i] + term[i + 1:]  # one letter dropped
        await pilot.press("enter")
        assert _last(app)["rating"] == 2 and "typo" in _feedback(screen)
        assert "{+" in _feedback(screen)  # the missing letter is shown in the diff
        await pilot.press("n")
        await pilot.pause()
        screen.view.query_one("#answer", Input).value = card.term.upper()
        await pilot.press("enter")
        assert _last(app)["rating"] == 3 and "✓ Right" in _feedback(screen)
        await pilot.press("n")
        await pilot.pause()
        assert "3 of 3 right" not in str(screen.query_one("#quiz-done", Static).render())
        assert "2 of 3 right" in str(screen.query_one("#quiz-done", Static).render())


async def test_numeric_parses_forms_rejects_garbage_and_shows_the_worked_solution(tmp_path):
    app = TutorApp(store=Store(tmp_path / "p.sqlite3"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(app, pilot, "3")
        view = screen.view
        item = view.question.card.numeric
        field = view.query_one("#answer", Input)
        field.value = "seven-ish"
        await pilot.press("enter")
        assert history(app.store) == []  # unreadable: a message, nothing recorded, text kept
        assert "✗" in str(view.query_one("#answer-error", Static).render())
        assert field.value == "seven-ish"
        field.value = item.answer_text if item.is_shape else f"{float(item.value):.6e}"
        await pilot.press("enter")
        assert _last(app)["mode"] == "quiz:numeric" and _last(app)["rating"] == 3
        assert "Worked solution" in _feedback(screen)
        assert item.solution.splitlines()[0][:20] in _feedback(screen)
        await pilot.press("n")
        await pilot.pause()
        item = screen.view.question.card.numeric
        screen.view.query_one("#answer", Input).value = "(1, 1)" if item.is_shape else "-123456789"
        await pilot.press("enter")
        assert _last(app)["rating"] == 1 and "✗ Wrong" in _feedback(screen)


async def test_explain_in_your_own_words_then_self_grade(tmp_path):
    app = TutorApp(store=Store(tmp_path / "p.sqlite3"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(app, pilot, "4")
        view = screen.view
        assert isinstance(view, ExplainView)
        await pilot.press("ctrl+s")  # empty answer: asked to write first
        assert not view.revealed and "Write your answer first" in str(
            view.query_one("#explain-help", Static).render())
        view.query_one(TextArea).insert("Attention lets every token look at every other token.")
        await pilot.press("ctrl+s")
        assert view.revealed
        assert view.question.card.back[:30] in str(view.query_one("#model-answer", Static).render())
        points = view.query_one(Checklist)
        assert points.option_count == len(view.question.card.checklist)
        await pilot.press("space")  # tick the first point
        assert points.ticked == {0}
        shown = [Content.from_markup(points.get_option_at_index(i).prompt).plain for i in (0, 1)]
        assert shown[0].startswith("[x] ") and shown[1].startswith("[ ] ")  # readable without colour
        await pilot.press("ctrl+s")
        expected = q.self_grade(view.question, 1).rating
        assert _last(app)["mode"] == "quiz:explain" and _last(app)["rating"] == expected
        assert _last(app)["answer"].startswith("Attention lets")
        await pilot.press("n")
        await pilot.pause()
        view = screen.view
        view.query_one(TextArea).insert("I know all of it.")
        await pilot.press("ctrl+s")
        for _ in view.question.card.checklist:
            await pilot.press("space", "down")
        await pilot.press("ctrl+s")
        assert _last(app)["rating"] == 3 and "All points" in _feedback(screen)


async def test_chapter_quiz_from_the_picker_and_from_a_lesson(tmp_path):
    app = TutorApp(store=Store(tmp_path / "p.sqlite3"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(app, pilot, "5")
        assert screen.state == "lesson"
        await pilot.press("enter")
        await pilot.pause()
        assert screen.mode == "chapter" and screen.lesson
        lesson_cards = {c.id for c in screen.session.deck.by_lesson(screen.lesson)}
        assert {qq.card_id for qq in screen.questions} <= lesson_cards
        assert 1 <= len(screen.questions) <= 5
        view = screen.view
        if isinstance(view, ChoiceView):
            await pilot.press(str(view.question.answer_index + 1))
        elif isinstance(view, TypedView):
            view.query_one("#answer", Input).value = "zzzz"
            await pilot.press("enter")
        else:
            view.query_one(TextArea).insert("something")
            await pilot.press("ctrl+s", "ctrl+s")
        assert _last(app)["mode"] == "quiz:chapter"
        await pilot.press("escape", "escape", "escape")
        await pilot.pause()
        app.open_lesson("scaled-dot-product")
        await pilot.pause()
        await pilot.press("z")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, QuizScreen) and screen.lesson == "scaled-dot-product"
        assert {qq.card.lesson for qq in screen.questions} == {"scaled-dot-product"}
