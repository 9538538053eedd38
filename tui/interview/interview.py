"""Mock interview: a timed round of mixed questions, weighted to the weakest lessons, then a report.

The questions, their grading and the report come from minigpt.study.interview; this screen only
asks, keeps the clock and draws. Every answer is rated through the study session at once (a miss
is Again), and the finished report is kept in the progress database; the setup and the report
chart the past interviews (score, and the readiness each started from) over time.

As on interview-practice sites: escape asks (end now, pause, skip, keep going:
``tui.interview.interview_end``); a paused interview is kept (``minigpt.study.interview_pause``) and
the setup offers to resume it with its time left; one ended early is partial, out of the trend
unless kept (k on the report). What the learner typed stays on screen beside the model answer or
rubric; explain answers get a multi-line box; a notice comes at one minute left, and when time is
up the answer being typed is still revealed and recorded. A kata is written in a scratch copy
from its stub (``KataScreen(scratch=…)``): the practice draft is untouched, and only a pass in
that copy scores.
"""

from __future__ import annotations

import time
from datetime import date

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Static, TextArea

from minigpt import serving_policy
from minigpt.errors import DeckError, KataError, StoreError
from minigpt.study import interview, interview_pause
from minigpt.study.decks import cached_decks
from minigpt.study.plan import plan_settings
from minigpt.study.review import StudySession
from minigpt.text import markup_escape as escape
from tui import navigation
from tui.common.header import TutorHeader
from tui.interview import interview_views
from tui.interview.interview_end import EndInterviewQuestion, EndOrPause, now_text

WARN_AT_S = 60  # the "1 minute left" notice


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


class InterviewScreen(EndOrPause, Screen):
    BINDINGS = [
        Binding("escape", "ask_end", "End or pause", id="interview.ask_end"),  # while asking: a question, never at once
        Binding("escape", "back", "Back", id="interview.back"),                # the setup and the report
        Binding("ctrl+n", "skip", "Skip", show=True, priority=True, id="interview.skip"),
        Binding("s", "skip", "Skip", show=False, id="interview.skip_plain"),  # a plain key (a browser keeps ctrl+n)
        Binding("ctrl+g", "finish", "End now", show=True, priority=True, id="interview.finish"),
        Binding("ctrl+s", "submit_text", "Show answer", show=True, priority=True, id="interview.submit_text"),
        Binding("y", "self_grade(1)", "Got it", show=True, id="interview.got_it"),
        Binding("n", "self_grade(0)", "Missed", show=True, id="interview.missed"),
        Binding("o", "open_kata", "Open kata", show=True, id="interview.open_kata"),
        Binding("k", "keep", "Keep in trend", show=True, id="interview.keep"),
        Binding("enter", "confirm", "Next", show=True, id="interview.confirm"),
        *[Binding(str(i), f"tick({i})", f"Point {i}", show=False, id=f"interview.point_{i}") for i in range(1, 10)],
    ]

    def __init__(self, minutes: float | None = None, *, seed: int | None = None) -> None:
        super().__init__()
        self.minutes = minutes
        self.seed = seed
        self.state = "setup"  # setup | asking | revealed | report
        self.questions: list[interview.Question] = []
        self.index = 0
        self.report: interview.Report | None = None
        self.ticked: set[int] = set()
        self.rubric_view: Static | None = None
        self.started = 0.0
        self.asked_at = 0.0
        self.started_at = ""
        self.titles: dict[str, str] = {}
        self.typed = ""              # the answer as typed for the question revealed
        self.draft = ""              # the answer being typed (kept as it changes: see on_input_changed)
        self.time_up = False         # the clock ran out: the question on screen is the last
        self.warned = False          # the one-minute notice was given
        self.kata_screen = None      # the scratch kata editor opened for this question
        self.kata_code = ""          # its code so far (kept across reopening, pausing, resuming)
        self.kata_passed = False     # passed in a scratch copy opened earlier for this question
        self.saved_id: int | None = None  # the report's row (k keeps a partial one in the trend)
        self.kept = False            # k was pressed: the partial report is in the trend

    def compose(self) -> ComposeResult:
        yield TutorHeader()
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

    def show_setup(self) -> None:
        self.state = "setup"
        day, scope = plan_settings(self.app.store)
        if day:  # one line at 80 columns
            self.set_status(f"[b]Mock interview[/b] · weakest first · {escape(interview.day_line(day, date.today()))}")
        else:
            self.set_status("[b]Mock interview[/b] · questions from the lessons you read, weakest first")
        planned = " Only your plan's lessons are asked (minigpt plan)." if day and scope else ""
        widgets, focus = interview_views.setup_widgets(self.app.store, interview_pause.paused(self.app.store), planned)
        self._fill(*widgets)
        self.call_after_refresh(focus.focus)

    def seconds_left(self) -> float:
        return self.minutes * 60 - (time.monotonic() - self.started)

    def tick_clock(self) -> None:
        if self.state not in ("asking", "revealed") or self.time_up or isinstance(self.app.screen, EndInterviewQuestion):
            return
        left = self.seconds_left()
        if left <= 0:
            self.times_up()
            return
        if left <= WARN_AT_S and not self.warned and self.minutes * 60 > 2 * WARN_AT_S:  # not in a 2-minute one
            self.warned = True
            self.notify("1 minute left: finish this answer.", title="Mock interview", severity="warning", timeout=8)
        self.update_status(left)

    def update_status(self, left: float | None = None) -> None:
        left = self.seconds_left() if left is None else left
        q = self.questions[self.index]
        m, s = divmod(max(0, int(left)), 60)
        if self.time_up:  # one line at 80 columns
            self.set_status(f"[b]Time is up[/b] · grade your last answer (question {self.index + 1}), then the report")
            return
        self.set_status(f"[b]⏱ {m:02d}:{s:02d}[/b] · question {self.index + 1}/{len(self.questions)} · "
                        f"{interview.KINDS[q.kind].title} · {escape(_clip(self.titles.get(q.lesson, q.lesson), 34))}")

    # -- the round ----------------------------------------------------------------------------
    def start(self, minutes: float) -> None:
        from minigpt.study.readiness import readiness_for_store

        katas, passed = self._katas()
        r = readiness_for_store(self.app.store, passed)
        self.titles = {x.lesson: x.title for x in r.lessons}
        read = [x.lesson for x in r.lessons if x.parts.get("read")] or [x.lesson for x in r.lessons]
        read = interview.in_scope(read, plan_settings(self.app.store)[1])  # the interview day's lessons
        self.questions = interview.plan(self.session.deck_in_play(), read, {x.lesson: x.figure for x in r.lessons},
                                 minutes=minutes, katas_by_lesson=katas, run_questions=self._run_questions(),
                                 allow_code=serving_policy.code_editing_allowed(), seed=self.seed)
        if not self.questions:
            self.set_status("Nothing to ask yet: read a lesson first.")
            return
        self._forget_pause()  # one paused interview at a time: a new one replaces it
        self.minutes, self.index = minutes, 0
        self.report = interview.Report(minutes, titles=self.titles, readiness=r.overall)
        self.started, self.started_at = time.monotonic(), now_text()
        self.ask()

    def _katas(self) -> tuple[dict[str, list[str]], dict[str, tuple[int, int]]]:
        """Kata names per lesson, and (passed, katas) per lesson for readiness."""
        from minigpt.katas.catalogue import load_katas
        from minigpt.katas.history import lesson_katas

        try:
            katas = load_katas()
        except KataError:
            return {}, {}
        out: dict[str, list[str]] = {}
        for k in katas:
            for lesson in k.lessons:
                out.setdefault(lesson, []).append(k.name)
        return out, lesson_katas(self.app.store, katas, names=True)

    def ask(self, draft: str = "") -> None:
        q = self.questions[self.index]
        self.state, self.ticked, self.asked_at, self.typed, self.draft = "asking", set(), time.monotonic(), "", draft
        self.update_status()
        if q.kind == "kata":
            self.kata_screen, self.kata_passed = None, False
        widgets, answer = interview_views.question_widgets(q, draft)
        self._fill(*widgets)  # no ids in the body: the old children leave after the new arrive
        if answer is not None:
            self.call_after_refresh(interview_views.focus_at_end, answer)
        self.refresh_bindings()

    def current_text(self) -> str:
        """What is typed for the question on screen (the scratch code for a kata)."""
        if self.state == "revealed":
            return self.typed
        if self.questions and self.questions[self.index].kind == "kata":
            return self.kata_screen.latest_code if self.kata_screen is not None else self.kata_code
        for field in self.query(".iv-answer"):
            return field.text if isinstance(field, TextArea) else field.value
        return self.draft

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.state == "setup":
            try:
                minutes = float(event.value.strip() or interview.DEFAULT_MINUTES)
            except ValueError:
                minutes = 0
            if not 0 < minutes <= 240:
                self.notify("Give a length in minutes, between 1 and 240.", severity="warning")
                return
            self.start(minutes)
        elif self.state == "asking":
            self.reveal(event.value)

    @staticmethod
    def _run_questions() -> list:
        """Questions about the learner's own runs and sweeps (none when their folders cannot be read)."""
        from minigpt.experiments.sweep_questions import learner_run_questions

        return learner_run_questions()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "iv-resume":
            event.stop()
            self.resume()

    def reveal(self, typed: str) -> None:
        """The model answer (or the check) with what was typed beside it, to grade with both in view."""
        q = self.questions[self.index]
        self.typed = typed
        if q.kind == "compute":
            result = interview.grade_compute(self.session.deck, q, typed)
            if result.parsed is None and not self.time_up:  # empty or unreadable: said, the text kept
                self.notify(f"✗ {escape(result.message)}", severity="warning")
                return
            self.state = "revealed"
            self.record(1.0 if result.correct else 0.0)
            mark = "✓ right" if result.correct else f"✗ {escape(result.message)}"
            self._fill(*interview_views.compute_widgets(q, typed, mark))
        else:
            self.state = "revealed"
            widgets, self.rubric_view = interview_views.revealed_widgets(q, typed)
            self._fill(*widgets)
            if self.rubric_view is not None:
                self.draw_rubric()
        self.query_one("#iv-body", VerticalScroll).focus()  # the arrows scroll; the letters still grade
        self.refresh_bindings()

    def draw_rubric(self) -> None:
        self.rubric_view.update(interview_views.rubric_text(self.questions[self.index], self.ticked))

    def record(self, score: float, *, skipped: bool = False, missed: tuple[str, ...] = ()) -> None:
        q = self.questions[self.index]
        answer = interview.Answer(q, score, round(time.monotonic() - self.asked_at, 1), skipped, missed,
                           typed=self.typed)
        self.report.answers.append(answer)
        try:
            interview.feed_schedule(self.session, answer)
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
                self.saved_id = interview.save(self.app.store, self.report, self.started_at, now_text())
            except StoreError as e:
                self.notify(escape(str(e)), title="Report not saved", severity="warning")
        head = "Time is up." if timed_out else "Ended early." if partial else "Interview over."
        keep = " · k keeps it in your trend" if self.report.partial and self.saved_id else ""
        self.set_status(f"[b]{head}[/b] · score {round(100 * self.report.score)}%{keep} · escape: back")
        text = self.report.text() if self.report.answers else "No question answered."
        if self.report.partial and self.saved_id:
            text += "\n\nEnded early: kept, but out of your trend (k keeps it in)."
        self._fill(Static(escape(text), classes="iv-report"), *interview_views.trend_widgets(self.app.store))
        self.query_one("#iv-body", VerticalScroll).focus()  # the report scrolls with the keys
        self.refresh_bindings()

    # -- actions ------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        kind = self.questions[self.index].kind if self.questions and self.index < len(self.questions) else ""
        live = self.state in ("asking", "revealed")
        if action == "self_grade":
            return self.state == "revealed" and kind == "define"
        if action == "tick":
            return self.state == "revealed" and kind in interview.RUBRIC_KINDS
        if action == "open_kata":
            return self.state == "asking" and kind == "kata"
        if action == "confirm":
            return (self.state == "revealed" and (kind == "compute" or kind in interview.RUBRIC_KINDS)) or \
                (self.state == "asking" and kind == "kata")
        if action == "submit_text":
            return self.state == "asking" and kind in interview.RUBRIC_KINDS
        if action == "keep":
            return self.state == "report" and self.report is not None and self.report.partial and not self.kept \
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
        if q.kind in interview.RUBRIC_KINDS:
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
