"""What the mock interview screen shows in its body, built from the question and what was typed:
the setup (with a paused interview to resume), a question and its answer box, the revealed
answer beside what the learner typed, the rubric, the kata prompt and the trend. The screen
(``tui.interview.interview``) keeps the clock and the state; these only build widgets.
"""

from __future__ import annotations

from textual.containers import Horizontal
from textual.widgets import Button, Input, Static, TextArea

from minigpt.errors import KataError
from minigpt.study import interview, interview_trend
from minigpt.study.review import MAX_LOGGED_ANSWER_CHARS
from minigpt.text import markup_escape as escape
from tui.interview.interview_trend import InterviewTrendChart

MINUTES_CHARS = 12  # the length box: "240" fits many times over


def trend_widgets(store) -> list:
    """A line on the past interviews and their chart; a line only before the first."""
    past = interview_trend.points(store)
    if not past:
        return [Static("No interview in your trend yet: the chart of your scores starts with the first.")]
    chart = InterviewTrendChart(interview_trend.headline(past), classes="iv-trend")
    chart.set_points(past)
    return [chart]


def setup_widgets(store, paused, planned: str) -> tuple[list, object]:
    """The setup's widgets and the one to focus: Resume when an interview is paused (enter resumes
    it), else the minutes."""
    resume = []
    if paused is not None:
        resume = [Static(f"A paused interview: {escape(paused.line())}. Starting a new one replaces it."),
                  Button(f"Resume ({escape(paused.line().split(' · ')[0])})", id="iv-resume")]
    minutes = Input(placeholder=f"{interview.DEFAULT_MINUTES} (type another length, or just enter)",
                    max_length=MINUTES_CHARS)
    return [*resume, Static("How many minutes? (enter starts; 30 is an interview's usual length)"), minutes,
            Static("Define a term, explain a concept (tick the rubric's points you made), compute with "
                   f"new numbers, one kata where code may run. escape: end or pause.{planned}"),
            *trend_widgets(store)], (resume[1] if resume else minutes)


def kata_prompt(name: str) -> str:
    from minigpt.katas.catalogue import kata_by_name

    try:
        kata = kata_by_name(name)
    except KataError:
        return f"Write the kata {escape(name)!r}."
    return f"[b]{escape(kata.title)}[/b]\n{escape(kata.signature)}\n{escape(kata.docstring)}"


def question_widgets(q: interview.Question, draft: str = "") -> tuple[list, object | None]:
    """A question and its answer box (None for a kata): one line for a term or a number, several
    for an explanation (ctrl+s reveals, since enter starts a new line there)."""
    if q.kind == "kata":
        return [Static(kata_prompt(q.kata), classes="iv-prompt"),
                Static("o opens the kata in a scratch copy from its stub (your practice draft is "
                       "untouched); pass it there, come back and press enter to record it.")], None
    widgets = [Static(escape(q.prompt), classes="iv-prompt")]
    if q.kind in interview.RUBRIC_KINDS:
        answer = TextArea(draft, classes="iv-answer iv-explain")
        return [*widgets, answer, Static("[dim]Type your explanation; ctrl+s shows the rubric.[/dim]")], answer
    shape = q.note == "exact shape"
    hint = {"compute": "Type the shape, e.g. (2, 4, 8), enter to check." if shape
            else "Type the number (7.09M, 1/4, 3e-4 …), enter to check.",
            "define": "Say or type your answer, enter to see the definition."}[q.kind]
    if q.note:
        widgets.append(Static(f"[dim]{escape(q.note[:1].upper() + q.note[1:])}[/dim]", classes="iv-note"))
    # not selected on focus: a resumed draft is continued, never replaced by the first key typed
    answer = Input(draft, placeholder=hint, classes="iv-answer", max_length=MAX_LOGGED_ANSWER_CHARS,
                   select_on_focus=False)
    return [*widgets, answer], answer


def focus_at_end(answer) -> None:
    """Focus an answer box with its cursor after what it holds (a resumed draft goes on from there)."""
    answer.focus()
    if isinstance(answer, TextArea):
        answer.move_cursor(answer.document.end)
    else:
        answer.cursor_position = len(answer.value)


def compute_widgets(q: interview.Question, typed: str, mark: str) -> list:
    return [Static(escape(q.prompt)), Static(f"You typed {escape(typed.strip()) or '(nothing)'} · {mark}"),
            Static(escape(q.answer)), Static("[dim]enter: next[/dim]")]


def revealed_widgets(q: interview.Question, typed: str) -> tuple[list, Static | None]:
    """A define or explain question revealed, graded with what was typed in view: beside the
    definition (then the y/n line), or beside the rubric (returned, to redraw its ticks) with the
    model answer below, so the points to tick sit next to the answer they are ticked from."""
    yours = Static(f"[b]Your answer[/b]\n{escape(typed.strip()) or '[dim](nothing typed)[/dim]'}",
                   classes="iv-yours")
    if q.kind == "define":
        side = Horizontal(yours, Static(f"[b]Definition[/b]\n{escape(q.answer)}", classes="iv-model"),
                          classes="iv-side")
        return [Static(escape(q.prompt)), side, Static("[dim]y: I had it · n: I missed it[/dim]")], None
    rubric = Static(classes="iv-model iv-rubric")
    return [Static(escape(q.prompt)), Horizontal(yours, rubric, classes="iv-side"),
            Static(f"[b]Model answer[/b]\n{escape(q.answer)}")], rubric


def rubric_text(q: interview.Question, ticked: set[int]) -> str:
    lines = [f"{'☑' if i in ticked else '☐'} {i} {escape(p)}" for i, p in enumerate(q.rubric, 1)]
    return "[b]Rubric[/b]: each point you made, by its number; enter records\n" + "\n".join(lines)
