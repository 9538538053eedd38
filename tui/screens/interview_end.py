"""Escape in a mock interview asks what to do, as interview-practice sites do: end now (the report,
kept out of the trend unless the learner keeps it), pause (saved, resumed later with the time
left), skip this question, or keep going. "Keep going" is focused first, so a stray Enter changes
nothing; each choice also has a plain key. Dismisses with "end", "pause", "skip" or "" (go on).
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

CHOICES = (("go-on", "Keep going", ""), ("end", "End now", "end"), ("pause", "Pause", "pause"),
           ("skip", "Skip question", "skip"))


class EndInterviewQuestion(ModalScreen[str]):
    BINDINGS = [Binding("escape,k", "choose('')", "Keep going", show=True),
                Binding("e", "choose('end')", "End now", show=True),
                Binding("p", "choose('pause')", "Pause", show=True),
                Binding("s", "choose('skip')", "Skip question", show=True)]

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
