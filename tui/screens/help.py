"""Every key that works on the screen the learner came from, plus the app-wide ones."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


def _bindings_table(title: str, bindings) -> list[str]:
    rows = []
    for b in bindings:
        if isinstance(b, tuple):
            b = Binding(*b)
        if not b.description:
            continue
        key = b.key_display or b.key
        rows.append(f"  [b]{key:<14}[/b] {b.description}")
    return [f"[b u]{title}[/b u]", *rows, ""] if rows else []


class HelpScreen(ModalScreen):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]

    def __init__(self, origin: Screen):
        super().__init__()
        self.origin = origin

    def compose(self) -> ComposeResult:
        lines = ["[b]Keys[/b]  (escape closes)", ""]
        lines += _bindings_table(self.origin.__class__.__name__.replace("Screen", "") or "Screen",
                                 self.origin.BINDINGS)
        lines += _bindings_table("Everywhere", self.app.BINDINGS)
        lines += [
            "[b u]Lists and text[/b u]",
            "  [b]↑ ↓ PgUp PgDn[/b]  move and scroll",
            "  [b]tab / shift+tab[/b] next / previous control",
            "  [b]escape[/b]         back",
            "",
            "[b u]Command palette[/b u]",
            "  ctrl+p, then type: a lesson's title, an area, 'theme', 'home', 'keys'.",
        ]
        with VerticalScroll(id="help-body"):
            yield Static("\n".join(lines))

    def action_dismiss(self) -> None:
        self.dismiss()
