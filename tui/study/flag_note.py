""""This question is wrong": flag the card on screen, with an optional note (f on quiz/flashcards).

The flag is stored by minigpt.study.flags; the card leaves queues and scores until the flag is
resolved (``minigpt cards --flagged`` lists them). Dismisses with True when the card was flagged.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from minigpt.errors import StoreError
from minigpt.study import flags
from minigpt.text import markup_escape as escape


class FlagNoteScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="flag_note.cancel")]

    def __init__(self, card_id: str) -> None:
        super().__init__()
        self.card_id = card_id

    def compose(self) -> ComposeResult:
        with Vertical(id="flag-box"):
            yield Static("[b]This question is wrong[/b]\nThe card leaves your scores and queues "
                         "until its flag is resolved (ctrl+p Flagged cards).", id="flag-title")
            yield Input(placeholder="what is wrong? (optional) · enter: flag · escape: cancel",
                        max_length=flags.MAX_NOTE_CHARS, id="flag-note")
            yield Static(id="flag-error")

    def on_mount(self) -> None:
        self.query_one("#flag-note", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            flags.flag_card(self.app.store, self.card_id, event.value)
        except StoreError as e:
            self.query_one("#flag-error", Static).update(f"✗ Not saved: {escape(str(e))}")
            return
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
