"""The quiz screen driven with Pilot: every mode, right and wrong, each answer in the review log
with its mode and the rating the library maps the outcome to."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Input, Static, TextArea

from minigpt.study import quiz
from minigpt.study.formats import QUIZ_MODES
from minigpt.study.review import history
from tui.study.quiz import QuizScreen
from tui.study.study_quiz import Checklist, ChoiceView, ExplainView, TypedView


def _feedback(screen) -> str:
    return str(screen.view.query_one("#feedback", Static).render())


async def _start(app, pilot, mode: str) -> QuizScreen:
    """Open the quiz and pick ``mode`` by its number in the picker (the registry's order)."""
    digit = str(list(QUIZ_MODES).index(mode) + 1)
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


async def test_multiple_choice_right_then_wrong_says_why(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(app, pilot, "choice")
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


async def test_type_the_term_diff_confusable_and_typo(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(app, pilot, "type")
        # Put a term with a confusable on screen (the library's question for it).
        card = next(c for c in screen.session.deck if c.kind == "reverse" and c.confusables)
        screen.questions = [quiz.question_for(screen.session.deck, card, fmt="type")] * 3
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


async def test_numeric_parses_forms_rejects_garbage_and_shows_the_worked_solution(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(app, pilot, "numeric")
        deck = screen.session.deck
        screen.questions = [quiz.question_for(deck, deck["num.block-params"]),
                            quiz.question_for(deck, deck["num.head-split"]),
                            quiz.question_for(deck, deck["cloze.clip-factor"])]
        screen.show_question()
        await pilot.pause()
        view = screen.view
        assert "within 1% of the answer" in str(view.query_one(".quiz-note", Static).render())
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
        screen.view.query_one("#answer", Input).value = "(1, 1)"
        await pilot.press("enter")
        assert _last(app)["rating"] == 1 and "✗ Wrong" in _feedback(screen)
        await pilot.press("n")
        await pilot.pause()
        field = screen.view.query_one("#answer", Input)  # a numeric blank: 1/5 is 0.2
        field.value = "1x10^400"
        await pilot.press("enter")
        assert "too large" in str(screen.view.query_one("#answer-error", Static).render())
        assert _last(app)["card_id"] == "num.head-split"  # nothing recorded for it
        field.value = "1/5"
        await pilot.press("enter")
        assert _last(app) == {**_last(app), "card_id": "cloze.clip-factor", "rating": 3}


async def test_explain_in_your_own_words_then_self_grade(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(app, pilot, "explain")
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
        expected = quiz.self_grade(view.question, 1).rating
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


async def test_chapter_quiz_from_the_picker_and_from_a_lesson(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(app, pilot, "chapter")
        assert screen.state == "lesson"
        await pilot.press("enter")
        await pilot.pause()
        assert screen.mode == "chapter" and screen.lesson
        lesson_cards = {c.id for c in screen.session.deck.by_lesson(screen.lesson)}
        assert {qq.card_id for qq in screen.questions} <= lesson_cards
        assert 6 <= len(screen.questions) <= quiz.CHAPTER_QUIZ_SIZE
        assert len({qq.format for qq in screen.questions}) >= 2
        status = str(screen.query_one("#quiz-status", Static).render())
        assert screen.titles[screen.lesson][1] in status and screen.lesson not in status
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


def test_number_box_examples_are_no_answer():
    from minigpt.study import numeric
    from minigpt.study.decks import load_decks
    from tui.study.study_quiz import NUMBER_EXAMPLES

    answers = [float(c.numeric.value) for c in load_decks() if c.kind == "numeric"
               and not c.numeric.is_shape]
    answers += [numeric.parse_number(a) for c in load_decks() if c.kind == "cloze"
                and c.numeric_blanks for a in c.cloze_answers]
    for example in NUMBER_EXAMPLES:
        value = numeric.parse_number(example)
        assert not any(numeric.values_agree(value, a, 0.05) for a in answers), example


async def test_end_of_quiz_lists_misses_and_reviews_them(tmp_path, make_app):
    from tui.study.flashcards import FlashcardsScreen
    from tui.study.study_card import CardView

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _start(app, pilot, "choice")
        missed = []
        for _ in screen.questions:
            view = screen.view
            wrong = next(i for i, o in enumerate(view.question.options) if not o.correct)
            missed.append(view.question)
            await pilot.press(str(wrong + 1))
            await pilot.press("n")
            await pilot.pause()
        done = str(screen.query_one("#quiz-done", Static).render())
        assert "Missed (5)" in done and "v: review" in done
        for question in missed:
            assert question.right_answer[:30] in " ".join(done.split())
        assert "term." not in done and "q." not in done
        await pilot.press("v")
        await pilot.pause()
        cards = app.screen
        assert isinstance(cards, FlashcardsScreen)
        assert cards.cram_ids == [qq.card_id for qq in missed]
        assert cards.current == missed[0].card_id
        kind = str(cards.query_one(CardView).query_one("#card-kind", Static).render())
        assert missed[0].card_id not in kind
        await pilot.press("space", "3")
        await pilot.pause()
        assert cards.current == missed[1].card_id and _last(app)["mode"] == "cram"
