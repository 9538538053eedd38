"""One quiz question on screen, in its format; grading is the format's entry in
minigpt.study.formats (QUIZ_MODES), drawing is ours: one view class per format, in ``VIEWS``.

Each view posts ``Answered(outcome, answer)`` once; the quiz screen records it in the review log.
Right and wrong are always spelled out with ✓ / ✗ and words, never shown by colour alone.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from minigpt.errors import TutorError
from minigpt.study import quiz, rubric
from minigpt.study.formats import QUIZ_MODES
from minigpt.study.matching import MAX_ANSWER_CHARS
from minigpt.text import markup_escape as escape
from tui.common.capped_input import CappedInput

# Examples of what the number box reads; tests check that none equals an answer in the decks.
NUMBER_EXAMPLES = ("7/9", "0.0625", "1.5e3", "12k", "45%")


def diff_markup(pieces: list[tuple[str, str]]) -> str:
    """wdiff style: [-typed but wrong-] {+missing+}, so it reads without colour too."""
    out = []
    for op, text in pieces:
        t = escape(text)
        if op == "equal":
            out.append(t)
        elif op == "delete":
            out.append(f"[strike $error]\\[-{t}-][/]")
        else:
            out.append(f"[b $success]{{+{t}+}}[/]")
    return "".join(out)


def verdict_line(outcome: quiz.QuizOutcome) -> str:
    mark = "✓ Right" if outcome.correct else "✗ Wrong"
    if outcome.feedback.strip(".").lower() in ("right", "not quite"):
        return f"[b]{mark}[/b]"  # the library's plain verdict says nothing more than the mark
    return f"[b]{mark}[/b] · {escape(outcome.feedback)}"


class QuestionView(Vertical):
    """Base: prompt on top, a feedback block filled once the question is answered."""

    class Answered(Message):
        def __init__(self, view: QuestionView, outcome: quiz.QuizOutcome, answer: str) -> None:
            super().__init__()
            self.view = view
            self.outcome = outcome
            self.answer = answer

    def __init__(self, question: quiz.QuizQuestion, **kwargs):
        super().__init__(classes="quiz-question", **kwargs)
        self.question = question
        self.outcome: quiz.QuizOutcome | None = None

    def compose(self) -> ComposeResult:
        yield Static(escape(self.question.prompt), classes="quiz-prompt")
        if self.question.note:  # how exact a number must be, stated before answering
            yield Static(f"[dim]Accepted: {escape(self.question.note)}[/dim]", classes="quiz-note")
        yield from self.compose_answer()
        yield Static(classes="quiz-feedback", id="feedback")

    def compose_answer(self) -> ComposeResult:
        raise NotImplementedError

    def on_mount(self) -> None:
        self.query_one("#feedback").display = False

    def focus_answer(self) -> None:
        raise NotImplementedError

    def outcome_for(self, answer, **options) -> quiz.QuizOutcome:
        """The answer graded by the question's format (its entry in QUIZ_MODES)."""
        return QUIZ_MODES[self.question.format].grade(self.question, answer, **options)

    def bring_into_view(self, widget) -> None:
        """Scroll the quiz body so ``widget`` starts at the top (at 80×24 it may be below)."""
        def scroll() -> None:
            for ancestor in self.ancestors_with_self:
                if getattr(ancestor, "id", None) == "quiz-body":
                    ancestor.scroll_to_widget(widget, top=True, animate=False)
        self.set_timer(0.05, scroll)  # after the layout that shows the widget

    def submit(self) -> None:
        """ctrl+s: the same as enter where enter submits."""

    def finish(self, outcome: quiz.QuizOutcome, answer: str, feedback: str) -> None:
        self.outcome = outcome
        box = self.query_one("#feedback", Static)
        box.update(feedback)
        box.display = True
        self.bring_into_view(box)
        self.post_message(self.Answered(self, outcome, answer))


class ChoiceView(QuestionView):
    BINDINGS = [Binding(str(i), f"pick({i - 1})", f"Option {i}", show=False, id=f"choice.option_{i}") for i in range(1, 7)]

    def compose_answer(self) -> ComposeResult:
        yield OptionList(*[Option(f"{i}. {escape(o.text)}", id=str(i - 1))
                           for i, o in enumerate(self.question.options, 1)], classes="quiz-options")

    def focus_answer(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_pick(int(event.option.id))

    def submit(self) -> None:
        ol = self.query_one(OptionList)
        if ol.highlighted is not None:
            self.action_pick(ol.highlighted)

    def action_pick(self, index: int) -> None:
        if self.outcome is not None or not 0 <= index < len(self.question.options):
            return
        outcome = self.outcome_for(index)
        lines = [verdict_line(outcome)]
        for i, o in enumerate(self.question.options, 1):
            yours = "  ← your answer" if i - 1 == index else ""
            if o.correct:
                lines.append(f"✓ {i}. {escape(o.text)}{yours}")
            else:
                lines.append(f"✗ {i}. {escape(o.text)}{yours}\n     [i]why not:[/i] {escape(o.why)}")
        # The feedback lists every option with ✓ / ✗, so the list itself can go (room at 80×24).
        self.query_one(OptionList).display = False
        self.finish(outcome, self.question.options[index].text, "\n".join(lines))


class TypedView(QuestionView):
    """Type the term or fill a cloze; enter submits, f2 shows a hint (graded Hard)."""

    gives_hints = True

    def __init__(self, question: quiz.QuizQuestion, **kwargs):
        super().__init__(question, **kwargs)
        self.hinted = False

    def answer_placeholder(self) -> str:
        card = self.question.card
        if card.kind == "cloze" and len(card.cloze_answers) > 1:
            return "several blanks: separate them with /"
        if card.kind == "cloze":
            return "type the missing part · f2: hint (graded Hard)"
        return "type the term · f2: hint (graded Hard)"

    def compose_answer(self) -> ComposeResult:
        yield CappedInput(placeholder=self.answer_placeholder(), id="answer", max_length=MAX_ANSWER_CHARS)
        yield Static(classes="quiz-error", id="answer-error")

    def on_capped_input_cut(self, event: CappedInput.Cut) -> None:
        event.stop()
        self.query_one("#answer-error", Static).update(
            f"✗ Too long: the answer was cut at {MAX_ANSWER_CHARS} characters ({event.dropped:,} left out); "
            f"an answer here is a term or a few words.")

    def focus_answer(self) -> None:
        self.query_one("#answer", Input).focus()

    def submit(self) -> None:
        self._grade(self.query_one("#answer", Input).value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._grade(event.value)

    def show_hint(self) -> bool:
        if not self.gives_hints or self.outcome is not None:
            return False
        expected = self.question.card.expected
        if len(expected) <= 3:  # a first letter would give a short answer away
            shape = f"{len(expected)} character{'s' * (len(expected) != 1)}"
        else:
            shape = " ".join(w[0] + "·" * (len(w) - 1) for w in expected.split())
        self.query_one("#answer-error", Static).update(f"Hint: {escape(shape)}")
        self.hinted = True
        return True

    def feedback_markup(self, outcome: quiz.QuizOutcome, text: str) -> str:
        feedback = f"{verdict_line(outcome)}\nExpected: [b]{escape(outcome.expected)}[/b]"
        # A diff (and its legend) only where the typed text differs: a typo or a miss.
        if outcome.match is not None and outcome.match.verdict != "exact":
            feedback += f"\nDiff:     {diff_markup(outcome.match.diff)}"
            feedback += "\n[dim]\\[-x-] typed but not expected · {+x+} missing[/dim]"
        if self.hinted and outcome.correct:
            feedback += "\n[dim]with a hint: graded Hard[/dim]"
        return feedback

    def _grade(self, text: str) -> None:
        if self.outcome is not None:
            return
        error = self.query_one("#answer-error", Static)
        if not text.strip():
            error.update("✗ Type an answer first (enter submits).")
            return
        problem = quiz.check_readable(self.question, text)
        if problem:  # an unreadable number is a typing problem, not a wrong answer: say why
            error.update(f"✗ {escape(problem)}")
            return
        outcome = self.outcome_for(text, hint=self.hinted)
        error.update("")
        self.query_one("#answer", Input).disabled = True
        self.finish(outcome, text, self.feedback_markup(outcome, text))


class NumberView(TypedView):
    """Type a number (or a shape), compared by value; then the worked solution."""

    gives_hints = False

    def answer_placeholder(self) -> str:
        card = self.question.card
        if card.kind == "numeric" and card.numeric.is_shape:
            return "a shape such as (5, 3, 7)"
        return "a number, e.g. " + ", ".join(NUMBER_EXAMPLES)

    def feedback_markup(self, outcome: quiz.QuizOutcome, text: str) -> str:
        return (f"{verdict_line(outcome)}\nYou typed {escape(text.strip())} · "
                f"answer {escape(outcome.expected)}\n\n[b]Worked solution[/b]\n"
                f"{escape(outcome.solution)}")


class ExplainView(QuestionView):
    """Free text, then the model answer and its checklist, pre-ticked by the offline rubric check
    (minigpt.study.rubric), then a self-grade: the learner's corrections are logged."""

    def __init__(self, question: quiz.QuizQuestion, **kwargs):
        super().__init__(question, **kwargs)
        self.revealed = False
        self.suggested: tuple[int, ...] = ()  # the points the rubric check pre-ticked

    def compose_answer(self) -> ComposeResult:
        yield TextArea(id="explain-text", classes="quiz-explain")
        yield Static("[dim]ctrl+s: show the model answer[/dim]", id="explain-help")
        yield Static(id="model-answer")
        yield Checklist(self.question.card.checklist, id="checklist", classes="quiz-checklist")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#model-answer").display = False
        self.query_one("#checklist").display = False

    def focus_answer(self) -> None:
        self.query_one("#explain-text", TextArea).focus()

    def submit(self) -> None:
        if self.outcome is not None:
            return
        if not self.revealed:
            self.reveal()
        else:
            self.grade()

    def reveal(self) -> None:
        text = self.query_one("#explain-text", TextArea)
        if not text.text.strip():
            self.query_one("#explain-help", Static).update(
                "✗ Write your answer first, then ctrl+s shows the model answer.")
            return
        answer, _checklist = quiz.reveal(self.question)
        self.revealed = True
        text.read_only = True
        found = rubric.check(self.question.card, text.text, rubric.bundled_aliases())
        self.suggested = found.found
        missed = "; ".join(found.points[i] for i in found.missed) or "none"
        model = self.query_one("#model-answer", Static)
        model.update(f"[b]Model answer[/b]\n{escape(answer)}\n\n"
                     f"[b]Which points did you make?[/b] [dim]Pre-ticked: the {len(found.found)} an offline "
                     f"check found in your answer; not found: {escape(missed)}. Correct the ticks.[/dim]")
        model.display = True
        points = self.query_one("#checklist", Checklist)
        points.ticked = set(found.found)
        points.refresh_ticks()
        points.display = True
        points.focus()
        text.add_class("-answered")  # shrinks, leaving room for the model answer
        self.bring_into_view(model)
        self.query_one("#explain-help", Static).update(
            "[dim]space or enter: tick a point you made · ctrl+s: grade yourself[/dim]")

    def grade(self) -> None:
        points = self.query_one("#checklist", Checklist)
        met = len(points.ticked)
        try:  # the learner's correction of the pre-ticks, kept to measure the check
            rubric.log_check(self.app.store, self.question.card.id, self.query_one("#explain-text", TextArea).text,
                             self.suggested, points.ticked)
        except TutorError:
            pass  # a read-only or busy database: the answer itself is still recorded by the screen
        outcome = self.outcome_for(met)
        points.disabled = True
        self.query_one("#explain-help", Static).update("")
        mark = {3: "✓ All points", 2: "~ Half or more", 1: "✗ Fewer than half"}[outcome.rating]
        self.finish(outcome, self.query_one("#explain-text", TextArea).text,
                    f"[b]{mark}[/b] · {escape(outcome.feedback)}")


class Checklist(OptionList):
    """Tick the points you made: "[x]" / "[ ]" in the text, so it reads without colour."""

    BINDINGS = [Binding("space", "toggle", "Tick / untick", show=False, id="checklist.toggle")]

    def __init__(self, points: tuple[str, ...], **kwargs):
        super().__init__(**kwargs)
        self.points = points
        self.ticked: set[int] = set()

    def on_mount(self) -> None:
        self._draw()

    def refresh_ticks(self) -> None:
        """Redraw after ``ticked`` was set from outside (the rubric check's pre-ticks)."""
        if self.is_mounted:
            self._draw()

    def _draw(self) -> None:
        keep = self.highlighted
        self.clear_options()
        self.add_options([Option(escape(f"[{'x' if i in self.ticked else ' '}] {p}"), id=str(i))
                          for i, p in enumerate(self.points)])
        self.highlighted = keep if keep is not None else 0

    def action_toggle(self) -> None:
        if self.highlighted is not None and not self.disabled:
            self.ticked ^= {self.highlighted}
            self._draw()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()  # enter ticks too
        self.action_toggle()


# The widget for each format of minigpt.study.formats, by its id there (a test checks every format
# has one, and nothing else does).
VIEWS: dict[str, type[QuestionView]] = {
    "choice": ChoiceView, "type": TypedView, "numeric": NumberView, "explain": ExplainView}


def view_for(question: quiz.QuizQuestion) -> QuestionView:
    return VIEWS[question.format](question)
