"""Mock interview: a timed round of mixed questions, weighted to the weakest lessons, then a report.

The questions, their grading and the report come from minigpt.study.interview; this screen only
asks, keeps the clock and draws. Every answer is rated through the study session at once (a miss
is Again), and the finished report is kept in the progress database; the setup and the report
chart the past interviews (score, and the readiness each started from) over time.

As on interview-practice sites: escape asks (end now, pause, skip, keep going:
``tui.screens.interview_end``); a paused interview is kept (``minigpt.study.interview_pause``) and
the setup offers to resume it with its time left; one ended early is partial, out of the trend
unless kept (k on the report). What the learner typed stays on screen beside the model answer or
rubric; explain answers get a multi-line box; a notice comes at one minute left, and when time is
up the answer being typed is still revealed and recorded. A kata is written in a scratch copy
from its stub (``KataScreen(scratch=…)``): the practice draft is untouched, and only a pass in
that copy scores.
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Input, Static, TextArea

from minigpt import serving_policy
from minigpt.errors import DeckError, KataError, StoreError
from minigpt.study import interview as iv
from minigpt.study import interview_pause, interview_trend
from minigpt.study.decks import cached_decks
from minigpt.study.plan import plan_settings
from minigpt.study.review import StudySession
from minigpt.text import markup_escape as escape
from tui import navigation
from tui.screens.interview_end import EndInterviewQuestion
from tui.widgets.interview_trend import InterviewTrendChart

WARN_AT_S = 60  # the "1 minute left" notice


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


class InterviewScreen(Screen):
    BINDINGS = [
        Binding("escape", "ask_end", "End or pause"),   # while asking: a question, never at once
        Binding("escape", "back", "Back"),               # the setup and the report
        Binding("ctrl+n", "skip", "Skip", show=True, priority=True),
        Binding("s", "skip", "Skip", show=False),         # a plain key (a browser keeps ctrl+n)
        Binding("ctrl+g", "finish", "End now", show=True, priority=True),
        Binding("ctrl+s", "submit_text", "Show answer", show=True, priority=True),  # the explain box
        Binding("y", "self_grade(1)", "Got it", show=True),
        Binding("n", "self_grade(0)", "Missed", show=True),
        Binding("o", "open_kata", "Open kata", show=True),
        Binding("k", "keep", "Keep in trend", show=True),
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
        self.titles: dict[str, str] = {}
        self.typed = ""              # the answer as typed for the question revealed
        self.time_up = False         # the clock ran out: the question on screen is the last
        self.warned = False          # the one-minute notice was given
        self.kata_screen = None      # the scratch kata editor opened for this question
        self.kata_code = ""          # its code so far (kept across reopening, pausing, resuming)
        self.kata_passed = False     # passed in a scratch copy opened earlier for this question
        self.saved_id: int | None = None  # the report's row (k keeps a partial one in the trend)

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
            return [Static("No interview in your trend yet: the chart of your scores starts with the first.")]
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
        paused = interview_pause.paused(self.app.store)
        resume = []
        if paused is not None:  # focused first: enter resumes it
            resume = [Static(f"A paused interview: {escape(paused.line())}. Starting a new one replaces it."),
                      Button(f"Resume ({escape(paused.line().split(' · ')[0])})", id="iv-resume")]
        self._fill(*resume,
                   Static("How many minutes? (enter starts; 30 is an interview's usual length)"),
                   minutes := Input(placeholder=f"{iv.DEFAULT_MINUTES} (type another length, or just enter)"),
                   Static("Define a term, explain a concept (tick the rubric's points you made), "
                          f"compute with new numbers, one kata where code may run. escape: end or pause.{planned}"),
                   *self.trend_widgets())
        self.call_after_refresh((resume[1] if resume else minutes).focus)

    def seconds_left(self) -> float:
        return self.minutes * 60 - (time.monotonic() - self.started)

    def tick_clock(self) -> None:
        if self.state not in ("asking", "revealed") or self.time_up or isinstance(self.app.screen, EndInterviewQuestion):
            return
        left = self.seconds_left()
        if left <= 0:
            self.times_up()
            return
        if left <= WARN_AT_S and not self.warned:
            self.warned = True
            self.notify("1 minute left: finish this answer.", title="Mock interview", severity="warning", timeout=8)
        self.update_status(left)

    def update_status(self, left: float | None = None) -> None:
        left = self.seconds_left() if left is None else left
        q = self.questions[self.index]
        m, s = divmod(max(0, int(left)), 60)
        clock = "[b]Time is up[/b] · last answer" if self.time_up else f"[b]⏱ {m:02d}:{s:02d}[/b]"
        self.set_status(f"{clock} · question {self.index + 1}/{len(self.questions)} · "
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
        self._forget_pause()  # one paused interview at a time: a new one replaces it
        self.minutes, self.index = minutes, 0
        self.report = iv.Report(minutes, titles=self.titles, readiness=r.overall)
        self.started, self.started_at = time.monotonic(), _now()
        self.ask()

    def resume(self) -> None:
        try:
            paused = interview_pause.resume(self.app.store)
        except StoreError as e:
            self.notify(escape(str(e)), title="Not resumed", severity="warning")
            return
        if paused is None:
            self.notify("The paused interview could not be read back.", severity="warning")
            self.show_setup()
            return
        self.questions, self.index, self.report = paused.questions, paused.index, paused.report
        self.minutes, self.titles, self.started_at = paused.report.minutes, paused.report.titles, paused.started_at
        self.started = time.monotonic() - (self.minutes * 60 - paused.seconds_left)  # the time it had left
        self.kata_code = paused.draft if self.questions[self.index].kind == "kata" else ""
        self.ask(draft=paused.draft)

    def _forget_pause(self) -> None:
        try:
            interview_pause.discard(self.app.store)
        except StoreError as e:
            self.notify(escape(str(e)), title="Not saved", severity="warning")

    def pause(self) -> None:
        """Keep the interview to resume later, with its time left, and leave."""
        paused = interview_pause.Paused(self.started_at, _now(), self.seconds_left(), self.report,
                                        self.questions, self.index, self.current_text())
        try:
            interview_pause.pause(self.app.store, paused)
        except StoreError as e:
            self.notify(escape(str(e)), title="Not paused", severity="warning")
            return
        self.state = "paused"
        self.notify(f"Paused with {paused.line().split(' · ')[0]}: the mock interview (i on home) resumes it.",
                    timeout=6)
        self.app.pop_screen()

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

    def ask(self, draft: str = "") -> None:
        q = self.questions[self.index]
        self.state, self.ticked, self.asked_at, self.typed = "asking", set(), time.monotonic(), ""
        self.update_status()
        widgets = [Static(escape(q.prompt), classes="iv-prompt")]
        answer = None
        if q.kind == "kata":
            self.kata_screen, self.kata_passed = None, False
            widgets = [Static(self._kata_prompt(q.kata), classes="iv-prompt"),
                       Static("o opens the kata in a scratch copy from its stub (your practice draft is "
                              "untouched); pass it there, come back and press enter to record it.")]
        elif q.kind == "explain":  # room for an explanation: several lines, ctrl+s reveals
            widgets += [answer := TextArea(draft, classes="iv-answer iv-explain"),
                        Static("[dim]Type your explanation; ctrl+s shows the rubric.[/dim]")]
        else:
            shape = q.note == "exact shape"
            hint = {"compute": "Type the shape, e.g. (2, 4, 8), enter to check." if shape
                    else "Type the number (7.09M, 1/4, 3e-4 …), enter to check.",
                    "define": "Say or type your answer, enter to see the definition."}[q.kind]
            if q.note:
                widgets.append(Static(f"[dim]{escape(q.note[:1].upper() + q.note[1:])}[/dim]", classes="iv-note"))
            widgets.append(answer := Input(draft, placeholder=hint, classes="iv-answer"))
        self._fill(*widgets)  # no ids in the body: the old children leave after the new arrive
        if answer is not None:
            self.call_after_refresh(answer.focus)
        self.refresh_bindings()

    def current_text(self) -> str:
        """What is typed for the question on screen (the scratch code for a kata)."""
        if self.state == "revealed":
            return self.typed
        if self.questions and self.questions[self.index].kind == "kata":
            return self.kata_screen.latest_code if self.kata_screen is not None else self.kata_code
        for field in self.query(".iv-answer"):
            return field.text if isinstance(field, TextArea) else field.value
        return ""

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

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "iv-resume":
            event.stop()
            self.resume()

    def _yours(self, typed: str) -> Static:
        return Static(f"[b]Your answer[/b]\n{escape(typed.strip()) or '[dim](nothing typed)[/dim]'}",
                      classes="iv-yours")

    def reveal(self, typed: str) -> None:
        """The model answer (or the check) with what was typed beside it, to grade with both in view."""
        q = self.questions[self.index]
        self.typed = typed
        if q.kind == "compute":
            result = iv.grade_compute(self.session.deck, q, typed)
            if result.parsed is None and not self.time_up:  # empty or unreadable: said, the text kept
                self.notify(f"✗ {escape(result.message)}", severity="warning")
                return
            self.state = "revealed"
            self.record(1.0 if result.correct else 0.0)
            mark = "✓ right" if result.correct else f"✗ {escape(result.message)}"
            self._fill(Static(escape(q.prompt)), Static(f"You typed {escape(typed.strip()) or '(nothing)'} · {mark}"),
                       Static(escape(q.answer)), Static("[dim]enter: next[/dim]"))
        else:
            self.state = "revealed"
            title, tail = ("Definition", [Static("[dim]y: I had it · n: I missed it[/dim]")]) \
                if q.kind == "define" else ("Model answer", [rubric := Static()])
            self._fill(Static(escape(q.prompt)),
                       Horizontal(self._yours(typed), Static(f"[b]{title}[/b]\n{escape(q.answer)}",
                                                             classes="iv-model"), classes="iv-side"),
                       *tail)
            if q.kind == "explain":
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
        answer = iv.Answer(q, score, round(time.monotonic() - self.asked_at, 1), skipped, missed,
                           typed=self.typed)
        self.report.answers.append(answer)
        try:
            iv.feed_schedule(self.session, answer)
        except StoreError as e:
            self.notify(escape(str(e)), title="Not saved", severity="warning")

    def next_question(self) -> None:
        self.index += 1
        if self.time_up or self.index >= len(self.questions):
            self.finish(timed_out=self.time_up)
        else:
            self.ask()

    def times_up(self) -> None:
        """The answer in progress is revealed and recorded (graded as usual), then the report."""
        self.time_up = True
        q = self.questions[self.index]
        if self.state == "asking" and q.kind == "kata" and (self.kata_screen is not None or self.kata_code):
            self.typed = self.current_text()
            self.action_confirm()
        elif self.state == "asking" and q.kind != "kata" and self.current_text().strip():
            self.reveal(self.current_text())
            self.notify("Time is up: grade this last answer, then the report.", severity="warning")
            if self.state == "revealed":
                self.update_status()
        elif self.state != "revealed":
            self.finish(timed_out=True)
        else:
            self.update_status()

    def finish(self, *, timed_out: bool = False, partial: bool = False) -> None:
        if self.report is None or self.state in ("report", "paused"):
            return
        self.state = "report"
        self.report.partial = partial and not (timed_out or self.time_up)  # the clock ended it: whole
        if self.report.answers:
            try:
                self.saved_id = iv.save(self.app.store, self.report, self.started_at, _now())
            except StoreError as e:
                self.notify(escape(str(e)), title="Report not saved", severity="warning")
        head = "Time is up." if timed_out else "Ended early." if partial else "Interview over."
        keep = " · k keeps it in your trend" if self.report.partial and self.saved_id else ""
        self.set_status(f"[b]{head}[/b] · score {round(100 * self.report.score)}%{keep} · escape: back")
        text = self.report.text() if self.report.answers else "No question answered."
        if self.report.partial and self.saved_id:
            text += "\n\nEnded early: kept, but out of your trend (k keeps it in)."
        self._fill(Static(escape(text), classes="iv-report"), *self.trend_widgets())
        self.query_one("#iv-body", VerticalScroll).focus()  # the report scrolls with the keys
        self.refresh_bindings()

    def _kata_prompt(self, name: str) -> str:
        from minigpt.katas.catalogue import kata_by_name

        try:
            kata = kata_by_name(name)
        except KataError:
            return f"Write the kata {escape(name)!r}."
        return f"[b]{escape(kata.title)}[/b]\n{escape(kata.signature)}\n{escape(kata.docstring)}"

    # -- actions ------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        kind = self.questions[self.index].kind if self.questions and self.index < len(self.questions) else ""
        live = self.state in ("asking", "revealed")
        if action == "self_grade":
            return self.state == "revealed" and kind == "define"
        if action == "tick":
            return self.state == "revealed" and kind == "explain"
        if action == "open_kata":
            return self.state == "asking" and kind == "kata"
        if action == "confirm":
            return (self.state == "revealed" and kind in ("compute", "explain")) or \
                (self.state == "asking" and kind == "kata")
        if action == "submit_text":
            return self.state == "asking" and kind == "explain"
        if action == "keep":
            return self.state == "report" and self.report is not None and self.report.partial \
                and self.saved_id is not None
        if action == "ask_end":
            return live
        if action == "back":
            return not live
        if action in ("skip", "finish"):
            return live and not self.time_up
        return True

    def action_submit_text(self) -> None:
        self.reveal(self.current_text())

    def action_confirm(self) -> None:
        q = self.questions[self.index]
        if q.kind == "explain":
            made = len(self.ticked)
            missed = tuple(p for i, p in enumerate(q.rubric, 1) if i not in self.ticked)
            self.record(made / len(q.rubric) if q.rubric else 0.0, missed=missed)
        elif q.kind == "kata":  # only a pass in this interview's scratch copy scores
            self.typed = self.current_text()
            passed = self.kata_passed or (self.kata_screen is not None and self.kata_screen.passed)
            self.record(1.0 if passed else 0.0)
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
            self.typed = self.current_text()
            self.record(0.0, skipped=True, missed=q.rubric)
        self.next_question()

    def action_finish(self) -> None:
        self.finish(partial=True)

    def action_keep(self) -> None:
        try:
            iv.keep_in_trend(self.app.store, self.saved_id)
        except StoreError as e:
            self.notify(escape(str(e)), title="Not saved", severity="warning")
            return
        self.report.partial = False  # in the trend now: k has nothing more to do
        self.notify("Kept in your trend.")
        self._fill(Static(escape(self.report.text()), classes="iv-report"), *self.trend_widgets())
        self.set_status(f"[b]Ended early, kept in your trend.[/b] · score {round(100 * self.report.score)}% · "
                        "escape: back")
        self.refresh_bindings()

    def action_ask_end(self) -> None:
        answered = len(self.report.answers) if self.report else 0
        self.app.push_screen(EndInterviewQuestion(self.seconds_left(), answered), self._ended)

    def _ended(self, choice: str | None) -> None:
        if self.state not in ("asking", "revealed"):
            return
        if choice == "end":
            self.finish(partial=True)
        elif choice == "pause":
            self.pause()
        elif choice == "skip" and not self.time_up:
            self.action_skip()
        elif self.state == "asking":  # keep going: back in the answer box
            for field in self.query(".iv-answer"):
                field.focus()

    def action_open_kata(self) -> None:
        from minigpt.katas.catalogue import kata_by_name

        try:
            kata = kata_by_name(self.questions[self.index].kata)
        except KataError as e:
            self.notify(escape(str(e)), severity="error")
            return
        if self.kata_screen is not None:  # reopened: the code written so far in this question
            self.kata_code, self.kata_passed = self.kata_screen.latest_code, self.kata_passed or self.kata_screen.passed
        self.kata_screen = navigation.open_screen(self.app, "kata", kata, scratch=self.kata_code or kata.stub)

    def action_back(self) -> None:
        self.app.pop_screen()
