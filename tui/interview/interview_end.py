"""Escape in a mock interview asks what to do, as interview-practice sites do: end now (the report,
kept out of the trend unless the learner keeps it), pause (saved, resumed later with the time
left), skip this question, or keep going. "Keep going" is focused first, so a stray Enter changes
nothing; each choice also has a plain key. The question dismisses with "end", "pause", "skip" or
"" (go on); :class:`EndOrPause` is the interview screen's side of it: the question, the pause and
its resuming, and k keeping an interview ended early in the trend.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from minigpt.errors import StoreError
from minigpt.study import interview, interview_pause
from minigpt.text import markup_escape as escape
from tui.interview import interview_views


def now_text() -> str:
    """UTC now as the interview table keeps it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


CHOICES = (("go-on", "Keep going", ""), ("end", "End now", "end"), ("pause", "Pause", "pause"),
           ("skip", "Skip question", "skip"))


class EndInterviewQuestion(ModalScreen[str]):
    BINDINGS = [Binding("escape,k", "choose('')", "Keep going", show=True, id="interview_end.keep_going"),
                Binding("e", "choose('end')", "End now", show=True, id="interview_end.end"),
                Binding("p", "choose('pause')", "Pause", show=True, id="interview_end.pause"),
                Binding("s", "choose('skip')", "Skip question", show=True, id="interview_end.skip")]

    def __init__(self, seconds_left: float, answered: int) -> None:
        super().__init__()
        self.seconds_left = seconds_left
        self.answered = answered

    def compose(self) -> ComposeResult:
        m, s = divmod(max(0, int(self.seconds_left)), 60)
        with Vertical(id="iv-end-box"):
            yield Static(f"[b]End or pause the interview?[/b] {m:02d}:{s:02d} left, "
                         f"{self.answered} answered.\n"
                         "End now: the report, out of your trend unless you keep it. "
                         "Pause: saved, resumed later with the time left.", id="iv-end-question")
            with Horizontal(id="iv-end-buttons"):
                for button_id, label, _ in CHOICES:
                    yield Button(label, id=f"iv-{button_id}")
            yield Static("[b]k[/b]/escape keep going · [b]e[/b] end · [b]p[/b] pause · [b]s[/b] skip",
                         id="iv-end-keys")

    def on_mount(self) -> None:
        self.query_one("#iv-go-on", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(next(value for button_id, _, value in CHOICES if event.button.id == f"iv-{button_id}"))

    def action_choose(self, value: str) -> None:
        self.dismiss(value)


class EndOrPause:
    """The interview screen's escape: ask, then end (partial), pause, skip or go on; resume a pause."""

    def resume(self) -> None:
        try:
            paused = interview_pause.resume(self.app.store)
        except StoreError as e:
            self.notify(escape(str(e)), title="Not resumed", severity="warning")
            return
        gone = paused is not None and any(q.card_id and self.session.deck.get(q.card_id) is None
                                          for q in paused.questions)  # a deck changed since
        if paused is None or gone:
            self.notify("The paused interview could not be read back"
                        f"{' (a card it asks is no longer in the decks)' if gone else ''}: start a new one.",
                        severity="warning")
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

    def _keep_paused(self) -> interview_pause.Paused:
        """Save the interview as it stands (its time left, the answer typed); StoreError if refused."""
        paused = interview_pause.Paused(self.started_at, now_text(), self.seconds_left(), self.report,
                                        self.questions, self.index, self.current_text())
        interview_pause.pause(self.app.store, paused)
        self.state = "paused"
        return paused

    def pause(self) -> None:
        """Keep the interview to resume later, with its time left, and leave."""
        try:
            paused = self._keep_paused()
        except StoreError as e:
            self.notify(escape(str(e)), title="Not paused", severity="warning")
            return
        self.notify(f"Paused with {paused.line().split(' · ')[0]}: the mock interview (i on home) resumes it.",
                    timeout=6)
        self.app.pop_screen()

    # The answer as it is typed: the box is gone by the time the screen unmounts.
    def on_input_changed(self, event) -> None:
        if event.input.has_class("iv-answer"):
            self.draft = event.value

    def on_text_area_changed(self, event) -> None:
        if event.text_area.has_class("iv-answer"):
            self.draft = event.text_area.text

    def on_unmount(self) -> None:
        """Leaving with a question live other than through escape's question (the app quit, or its
        terminal closed) pauses the interview, as "Pause" would: resumed later, never lost."""
        if self.report is not None and self.state in ("asking", "revealed"):
            try:
                self._keep_paused()
            except StoreError:
                pass  # the app is closing: nowhere left to say it; the answers rated are saved already

    def action_keep(self) -> None:
        try:
            interview.keep_in_trend(self.app.store, self.saved_id)
        except StoreError as e:
            self.notify(escape(str(e)), title="Not saved", severity="warning")
            return
        self.kept = True  # in the trend now (still ended early): k has nothing more to do
        self.notify("Kept in your trend.")
        self._fill(Static(escape(self.report.text()), classes="iv-report"), *interview_views.trend_widgets(self.app.store))
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

