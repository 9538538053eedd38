"""The maths explorers' chooser (o on the stepper). The list of explorers is in ``tui.navigation``."""

from __future__ import annotations

from rich.console import Group
from rich.padding import Padding
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from minigpt.text import markup_escape as escape
from tui.keymap import shown_key_of
from tui.navigation import EXPLORERS, open_explorer


class ExplorerMenu(ModalScreen):
    BINDINGS = [Binding("escape", "dismiss", "Close", id="explorer_menu.close")] + [
        Binding(e.key, f"open('{e.id}')", e.title, id=f"explorer_menu.{e.id}") for e in EXPLORERS
    ]

    def compose(self) -> ComposeResult:
        yield Static("[b]Maths explorers[/b]  (number or enter opens, escape closes)", id="explorer-menu-title")
        # The description sits in a padded block, so its wrapped lines keep their indent.
        yield OptionList(*[Option(Group(Text.from_markup(f"[b]{escape(shown_key_of(self.app, f'explorer_menu.{e.id}', e.key))}[/b]  {e.title}"),
                                        Padding(Text(e.description, style="dim"), (0, 0, 0, 3))), id=e.id)
                           for e in EXPLORERS], id="explorer-menu")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.action_open(event.option.id)

    def action_open(self, explorer_id: str) -> None:
        app = self.app
        self.dismiss()
        open_explorer(app, explorer_id)

    def action_dismiss(self) -> None:
        self.dismiss()
