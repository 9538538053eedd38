"""Compare models (the course's chapter 9): the same sampling settings across the bigram, MLP and
MiniGPT checkpoints side by side, each with its validation and test loss."""

from __future__ import annotations

from dataclasses import dataclass, replace

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Static

from minigpt.playground.inspection import MODEL_ORDER, compare_models
from minigpt.text import markup_escape as escape
from tui.common.header import TutorHeader
from tui.workers import Result, background

GLYPH = {"train": "●", "val": "◐", "test": "◑", "new": "★"}
COMPARE_NAMES = 12


def _loss(x) -> str:
    return "—" if x is None else f"{x:.3f}"


class CompareScreen(Screen):
    PALETTE_PREFIX = "Compare models"
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", show=True, id="playground_compare.back"),
        Binding("s", "seed(1)", "Next seed", show=True, id="playground_compare.next_seed"),
        Binding("S", "seed(-1)", "Previous seed", show=True, id="playground_compare.previous_seed"),
    ]

    def __init__(self, choices, reference, settings, current=None):
        super().__init__()
        self.choices, self.reference, self.current = choices, reference, current
        self.settings = replace(settings, n=min(settings.n, COMPARE_NAMES))
        self.columns = []

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        yield Static("Loading the models…", id="pg-columns-note")
        with Horizontal(classes="pg-columns"):
            for slot in MODEL_ORDER + ("yours",):  # the learner's own model last, when they have one
                yield Static(classes="pg-column", id=f"compare-{slot}")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "compare models"
        self.query_one("#compare-yours").display = False
        self.compute()

    @dataclass
    class Compared(Result):
        columns: list

    @background(thread=True, exclusive=True)
    def compute(self) -> Compared:
        return self.Compared(compare_models(self.choices, self.settings, self.reference, self.current))

    @on(Compared)
    def _show(self, message: Compared) -> None:
        self.columns = cols = message.columns
        self.query_one("#pg-columns-note", Static).update(
            f"{self.settings.describe()} · ● train ◐ val ◑ test ★ new · lower loss = better model")
        self.query_one("#compare-yours").display = any(c.slot == "yours" for c in cols)
        for c in cols:
            widget = self.query_one(f"#compare-{c.slot}", Static)
            widget.border_title = escape(c.label)
            lines = [f"val loss  [b]{_loss(c.val_loss)}[/b]", f"test loss {_loss(c.test_loss)}"]
            if c.batch is not None and c.note:  # the model's key settings
                lines.insert(0, f"[$text-muted]{escape(c.note)}[/]")
            if c.batch is None:
                lines += ["", f"[$warning]{escape(c.note or '')}[/]"]
            else:
                sm = c.batch.summary
                new = f"new {sm.share_new:.0%}" if sm.known else "new ?"
                lp = sm.mean_model_logprob_per_char if sm.mean_model_logprob_per_char is not None else \
                    sm.mean_logprob_per_char
                lines += [new, f"log p/char {lp:.2f}", ""]
                lines += [f"{GLYPH.get(x.membership, '?') if sm.known else ' '} {escape(x.text)}"
                          for x in c.batch.samples]
            widget.update("\n".join(lines))

    def action_seed(self, direction: int) -> None:
        self.settings = replace(self.settings, seed=self.settings.seed + direction)
        self.query_one("#pg-columns-note", Static).update("Sampling…")
        self.compute()
