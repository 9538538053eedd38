"""Mock interview: a timed round of mixed questions, weighted to the weakest lessons, then a report.

The questions, their grading and the report come from minigpt.study.interview; this screen only
asks, keeps the clock and draws. Every answer is rated through the study session at once (a miss
is Again), and the finished report is kept in the progress database; the setup and the report
chart the past interviews (score, and the readiness each started from) over time.
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from minigpt import serving_policy
from minigpt.errors import DeckError, KataError, StoreError
from minigpt.study import interview as iv
from minigpt.study import interview_trend
from minigpt.study.decks import cached_decks
from minigpt.study.plan import plan_settings
from minigpt.study.review import MAX_LOGGED_ANSWER_CHARS, StudySession
from minigpt.text import markup_escape as escape
from tui import navigation
from tui.widgets.interview_trend import InterviewTrendChart

MINUTES_CHARS = 12  # the length box: "240" fits many times over


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


class InterviewScreen(Screen):
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("ctrl+n", "skip", "Skip", show=True, priority=True),
        Binding("ctrl+g", "finish", "End now", show=True, priority=True),
        Binding("y", "self_grade(1)", "Got it", show=True),
        Binding("n", "self_grade(0)", "Missed", show=True),
        Binding("o", "open_kata", "Open kata", show=True),
        Binding("enter", "confirm", "Next", show=True),
        *[Binding(str(i), f"tick({i})", f"Point {i}", show=False) for i in range(1, 10)],
    ]

    def __init__(self, minutes: float | None = None, *, seed: int | None = None) -> None:
        super().__init__()
        self.minutes = minutes
        self.seed = seed
        self.state = "setup"  # setup | asking | revealed | report
        self.questions: list[iv.Question] = []
        self.index = 0
        self.report: iv.Report | None = None
        self.ticked: set[int] = set()
        self.rubric_view: Static | None = None
        self.started = 0.0
        self.asked_at = 0.0
        self.started_at = ""
        self.kata_passes = 0

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="iv-status")
        yield VerticalScroll(id="iv-body")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Mock interview"
        try:
            self.session = StudySession(self.app.store, cached_decks())
        except DeckError as e:
            self.set_status(f"✗ A deck file could not be read: {escape(str(e))}")
            return
        if self.minutes is not None:
            self.start(self.minutes)
        else:
            self.show_setup()
        self.set_interval(1.0, self.tick_clock)

    # -- drawing ------------------------------------------------------------------------------
    def set_status(self, text: str) -> None:
        self.query_one("#iv-status", Static).update(text)

    def _fill(self, *widgets) -> None:
        body = self.query_one("#iv-body", VerticalScroll)
        body.remove_children()
        body.mount_all(widgets)
        body.scroll_home(animate=False)

    def trend_widgets(self) -> list:
        """A line on the past interviews and their chart; a line only before the first."""
        past = interview_trend.points(self.app.store)
        if not past:
            return [Static("No interview taken yet: the chart of your scores starts with the first.")]
        chart = InterviewTrendChart(interview_trend.headline(past), classes="iv-trend")
        chart.set_points(past)
        return [chart]

    def show_setup(self) -> None:
        self.state = "setup"
        day, scope = plan_settings(self.app.store)
        if day:  # one line at 80 columns
            self.set_status(f"[b]Mock interview[/b] · weakest first · {escape(iv.day_line(day, date.today()))}")
        else:
            self.set_status("[b]Mock interview[/b] · questions from the lessons you read, weakest first")
        planned = " Only your plan's lessons are asked (minigpt plan)." if day and scope else ""
        self._fill(Static("How many minutes? (enter starts; 30 is an interview's usual length)"),
                   minutes := Input(placeholder=f"{iv.DEFAULT_MINUTES} (type another length, or just enter)",
                                    max_length=MINUTES_CHARS),
                   Static("Define a term, explain a concept (tick the rubric's points you made), "
                          f"compute with new numbers, one kata where code may run. ctrl+n skips.{planned}"),
                   *self.trend_widgets())
        self.call_after_refresh(minutes.focus)

    def tick_clock(self) -> None:
        if self.state in ("asking", "revealed"):
            left = self.minutes * 60 - (time.monotonic() - self.started)
            if left <= 0:
                self.finish(timed_out=True)
                return
            self.update_status(left)

    def update_status(self, left: float | None = None) -> None:
        if left is None:
            left = self.minutes * 60 - (time.monotonic() - self.started)
        q = self.questions[self.index]
        m, s = divmod(max(0, int(left)), 60)
        self.set_status(f"[b]⏱ {m:02d}:{s:02d}[/b] · question {self.index + 1}/{len(self.questions)} · "
                        f"{iv.KINDS[q.kind].title} · {escape(_clip(self.titles.get(q.lesson, q.lesson), 34))}")

    # -- the round ----------------------------------------------------------------------------
    def start(self, minutes: float) -> None:
        from minigpt.study.readiness import readiness_for_store

        katas, passed = self._katas()
        r = readiness_for_store(self.app.store, passed)
        self.titles = {x.lesson: x.title for x in r.lessons}
        read = [x.lesson for x in r.lessons if x.parts.get("read")] or [x.lesson for x in r.lessons]
        read = iv.in_scope(read, plan_settings(self.app.store)[1])  # the interview day's lessons
        self.questions = iv.plan(self.session.deck, read, {x.lesson: x.figure for x in r.lessons},
                                 minutes=minutes, katas_by_lesson=katas,
                                 allow_code=serving_policy.code_editing_allowed(), seed=self.seed)
        if not self.questions:
            self.set_status("Nothing to ask yet: read a lesson first.")
            return
        self.minutes, self.index = minutes, 0
        self.report = iv.Report(minutes, titles=self.titles, readiness=r.overall)
        self.started, self.started_at = time.monotonic(), _now()
        self.ask()

    def _katas(self) -> tuple[dict[str, list[str]], dict[str, tuple[int, int]]]:
        """Kata names per lesson, and (passed, katas) per lesson for readiness."""
        from minigpt.katas.catalogue import load_katas
        from minigpt.katas.progress import lesson_katas

        try:
            katas = load_katas()
        except KataError:
            return {}, {}
        out: dict[str, list[str]] = {}
        for k in katas:
            for lesson in k.lessons:
                out.setdefault(lesson, []).append(k.name)
        return out, lesson_katas(self.app.store, katas)

    def ask(self) -> None:
        q = self.questions[self.index]
        self.state, self.ticked, self.asked_at = "asking", set(), time.monotonic()
        self.update_status()
        widgets = [Static(escape(q.prompt), classes="iv-prompt")]
        if q.kind == "kata":
            self.kata_passes = self._passes(q.kata)
            widgets = [Static(self._kata_prompt(q.kata), classes="iv-prompt")]
            widgets.append(Static("o opens the kata's editor; come back and press enter to record it."))
        else:
            shape = q.note == "exact shape"
            hint = {"compute": "Type the shape, e.g. (2, 4, 8), enter to check." if shape
                    else "Type the number (7.09M, 1/4, 3e-4 …), enter to check.",
                    "define": "Say or type your answer, enter to see the definition.",
                    "explain": "Say or type your explanation, enter to see the rubric."}[q.kind]
            if q.note:
                widgets.append(Static(f"[dim]{escape(q.note[:1].upper() + q.note[1:])}[/dim]", classes="iv-note"))
            widgets.append(answer := Input(placeholder=hint, classes="iv-answer", max_length=MAX_LOGGED_ANSWER_CHARS))
        self._fill(*widgets)  # no ids in the body: the old children leave after the new arrive
        if q.kind != "kata":
            self.call_after_refresh(answer.focus)
        self.refresh_bindings()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.state == "setup":
            try:
                minutes = float(event.value.strip() or iv.DEFAULT_MINUTES)
            except ValueError:
                minutes = 0
            if not 0 < minutes <= 240:
                self.notify("Give a length in minutes, between 1 and 240.", severity="warning")
                return
            self.start(minutes)
        elif self.state == "asking":
            self.reveal(event.value)

    def reveal(self, typed: str) -> None:
        q = self.questions[self.index]
        if q.kind == "compute":
            result = iv.grade_compute(self.session.deck, q, typed)
            if result.parsed is None:  # empty or unreadable: said, nothing graded, the text kept
                self.notify(f"✗ {escape(result.message)}", severity="warning")
                return
            self.state = "revealed"
            self.record(1.0 if result.correct else 0.0)
            mark = "✓ right" if result.correct else f"✗ {escape(result.message)}"
            self._fill(Static(escape(q.prompt)), Static(mark), Static(escape(q.answer)),
                       Static("[dim]enter: next question[/dim]"))
        elif q.kind == "define":
            self.state = "revealed"
            self._fill(Static(escape(q.prompt)), Static(f"[b]Definition[/b]\n{escape(q.answer)}"),
                       Static("[dim]y: I had it · n: I missed it[/dim]"))
        else:
            self.state = "revealed"
            self._fill(Static(escape(q.prompt)), Static(f"[b]Model answer[/b]\n{escape(q.answer)}"),
                       rubric := Static())
            self.rubric_view = rubric
            self.draw_rubric()
        self.set_focus(None)
        self.refresh_bindings()

    def draw_rubric(self) -> None:
        q = self.questions[self.index]
        lines = [f"{'☑' if i in self.ticked else '☐'} {i} {escape(p)}" for i, p in enumerate(q.rubric, 1)]
        self.rubric_view.update(
            "[b]Rubric[/b] (press a point's number for each you made, enter to record)\n" + "\n".join(lines))

    def record(self, score: float, *, skipped: bool = False, missed: tuple[str, ...] = ()) -> None:
        q = self.questions[self.index]
        answer = iv.Answer(q, score, round(time.monotonic() - self.asked_at, 1), skipped, missed)
        self.report.answers.append(answer)
        try:
            iv.feed_schedule(self.session, answer)
        except StoreError as e:
            self.notify(escape(str(e)), title="Not saved", severity="warning")

    def next_question(self) -> None:
        self.index += 1
        if self.index >= len(self.questions):
            self.finish()
        else:
            self.ask()

    def finish(self, *, timed_out: bool = False) -> None:
        if self.report is None or self.state == "report":
            return
        self.state = "report"
        if self.report.answers:
            try:
                iv.save(self.app.store, self.report, self.started_at, _now())
            except StoreError as e:
                self.notify(escape(str(e)), title="Report not saved", severity="warning")
        head = "Time is up." if timed_out else "Interview over."
        self.set_status(f"[b]{head}[/b] · score {round(100 * self.report.score)}% · "
                        f"the trend chart is at the end · escape: back")
        text = self.report.text() if self.report.answers else "No question answered."
        self._fill(Static(escape(text)), *self.trend_widgets())
        self.query_one("#iv-body", VerticalScroll).focus()  # the report scrolls with the keys
        self.refresh_bindings()

    def _kata_prompt(self, name: str) -> str:
        from minigpt.katas.catalogue import kata_by_name

        try:
            kata = kata_by_name(name)
        except KataError:
            return f"Write the kata {escape(name)!r}."
        return f"[b]{escape(kata.title)}[/b]\n{escape(kata.signature)}\n{escape(kata.docstring)}"

    def _passes(self, kata: str) -> int:
        from minigpt.katas.progress import record

        return record(self.app.store, kata).passes

    # -- actions ------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        kind = self.questions[self.index].kind if self.questions and self.index < len(self.questions) else ""
        if action == "self_grade":
            return self.state == "revealed" and kind == "define"
        if action == "tick":
            return self.state == "revealed" and kind == "explain"
        if action == "open_kata":
            return self.state == "asking" and kind == "kata"
        if action == "confirm":
            return (self.state == "revealed" and kind in ("compute", "explain")) or \
                (self.state == "asking" and kind == "kata")
        if action in ("skip", "finish"):
            return self.state in ("asking", "revealed")
        return True

    def action_confirm(self) -> None:
        q = self.questions[self.index]
        if q.kind == "explain":
            made = len(self.ticked)
            missed = tuple(p for i, p in enumerate(q.rubric, 1) if i not in self.ticked)
            self.record(made / len(q.rubric) if q.rubric else 0.0, missed=missed)
        elif q.kind == "kata":
            self.record(1.0 if self._passes(q.kata) > self.kata_passes else 0.0)
        self.next_question()

    def action_self_grade(self, got: int) -> None:
        self.record(float(got))
        self.next_question()

    def action_tick(self, n: int) -> None:
        if n <= len(self.questions[self.index].rubric):
            self.ticked ^= {n}
            self.draw_rubric()

    def action_skip(self) -> None:
        q = self.questions[self.index]
        answered = self.state == "revealed" and q.kind == "compute"  # already recorded
        if not answered:
            self.record(0.0, skipped=True, missed=q.rubric)
        self.next_question()

    def action_finish(self) -> None:
        self.finish()

    def action_open_kata(self) -> None:
        from minigpt.katas.catalogue import kata_by_name

        try:
            kata = kata_by_name(self.questions[self.index].kata)
        except KataError as e:
            self.notify(escape(str(e)), severity="error")
            return
        navigation.open_screen(self.app, "kata", kata)

    def action_back(self) -> None:
        if self.state in ("asking", "revealed"):
            self.finish()  # what was answered is kept; the report shows first
            return
        self.app.pop_screen()
