"""Shown instead of a broken layout when the terminal is smaller than the app needs."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Static


class TooSmallScreen(Screen):
    """A plain screen, not a modal: the screen under it is then not laid out at all, so no
    widget is ever sized to a width where it breaks (an option list 10 columns wide crashed
    Textual's text wrapping before this screen could show)."""

    BINDINGS = [Binding("ctrl+q", "app.quit", "Quit", id="too_small.quit")]

    def __init__(self, min_width: int, min_height: int):
        super().__init__()
        self.min_width, self.min_height = min_width, min_height

    def compose(self) -> ComposeResult:
        with Middle():
            with Center():
                yield Static(id="too-small-text")

    def on_mount(self) -> None:
        self._update()

    def on_resize(self, event) -> None:
        self._update(event.size)

    def _update(self, size=None) -> None:
        w, h = size or self.app.size
        self.query_one("#too-small-text", Static).update(
            f"Please resize the terminal to at least {self.min_width}×{self.min_height}.\n"
            f"It is {w}×{h} now. (ctrl+q quits)"
        )
