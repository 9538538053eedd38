"""The maths explorers: a registry, a chooser (o on the stepper) and palette entries.

Each explorer is its own screen module (explorer_*.py); this module only lists them, so the
stepper, the palette and later the lessons can open one by id with ``open_explorer``.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class Explorer:
    id: str
    key: str
    title: str
    description: str
    module: str  # tui.screens.<module>
    screen: str  # class name in that module


EXPLORERS = [
    Explorer("scaling", "1", "Why √d_k", "std of q·k, largest weight and entropy, with and without scaling",
             "explorer_scaling", "ScalingExplorerScreen"),
    Explorer("positions", "2", "Positional encoding", "sinusoidal table as a heatmap, RoPE identity checked",
             "explorer_positions", "PositionsExplorerScreen"),
    Explorer("norms", "3", "LayerNorm step by step", "an editable vector through LayerNorm, BatchNorm, RMSNorm",
             "explorer_norms", "NormsExplorerScreen"),
    Explorer("params", "4", "Parameter counter", "per-component count of a MiniGPT vs 12·L·d²",
             "explorer_params", "ParamsExplorerScreen"),
    Explorer("trained", "5", "Trained-model attention", "every layer × head of a checkpoint on your name",
             "explorer_trained", "TrainedAttentionScreen"),
]


def open_explorer(app, explorer_id: str) -> None:
    for e in EXPLORERS:
        if e.id == explorer_id:
            cls = getattr(import_module(f"tui.screens.{e.module}"), e.screen)
            app.push_screen(cls())
            return
    app.notify(f"No explorer called {explorer_id!r}", severity="error")


class ExplorerMenu(ModalScreen):
    BINDINGS = [Binding("escape", "dismiss", "Close")] + [
        Binding(e.key, f"open('{e.id}')", e.title) for e in EXPLORERS
    ]

    def compose(self) -> ComposeResult:
        yield Static("[b]Maths explorers[/b]  (number or enter opens, escape closes)", id="explorer-menu-title")
        yield OptionList(*[Option(f"[b]{e.key}[/b]  {e.title}\n   [dim]{e.description}[/dim]", id=e.id)
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
