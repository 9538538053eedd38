"""Temperature sweep (the course's exercise 3): the same seed at T = 0.5 … 1.5 side by side, with
the entropy of the first next-character distribution at each temperature."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Static

from minigpt.errors import SamplingError
from minigpt.playground.generation import SWEEP_TEMPERATURES, temperature_sweep
from minigpt.playground.inspection import is_pretrained
from minigpt.text import markup_escape as escape
from tui.common.header import TutorHeader
from tui.workers import Result, background

GLYPH = {"train": "●", "val": "◐", "test": "◑", "new": "★"}
SWEEP_NAMES = 12  # what fits a column at 80×24


class SweepScreen(Screen):
    PALETTE_PREFIX = "Temperature sweep"
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", show=True, id="playground_sweep.back"),
        Binding("s", "seed(1)", "Next seed", show=True, id="playground_sweep.next_seed"),
        Binding("S", "seed(-1)", "Previous seed", show=True, id="playground_sweep.previous_seed"),
    ]

    def __init__(self, loaded, settings):
        super().__init__()
        self.loaded = loaded
        self.settings = replace(settings, n=min(settings.n, SWEEP_NAMES))
        self.columns = []

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        yield Static("Computing…", id="pg-columns-note")
        with Horizontal(classes="pg-columns"):
            for t in SWEEP_TEMPERATURES:
                col = Static(classes="pg-column", id=f"sweep-{str(t).replace('.', '_')}")
                col.border_title = f"T = {t:g}"
                yield col
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "temperature sweep"
        self.compute()

    @dataclass
    class Swept(Result):
        """The sweep's columns, or why sampling refused (``error``)."""
        columns: list = field(default_factory=list)
        error: str = ""

    @background(thread=True, exclusive=True)
    def compute(self) -> Swept:
        try:
            return self.Swept(temperature_sweep(self.loaded, self.settings))
        except SamplingError as e:
            return self.Swept(error=f"[b $error]⚠ {escape(str(e))}[/]")

    def _note(self, text: str) -> None:
        self.query_one("#pg-columns-note", Static).update(text)

    @on(Swept)
    def _show(self, message: Swept) -> None:
        if message.error:
            self._note(message.error)
            return
        self.columns = cols = message.columns
        s = self.settings
        # Everything but the temperature is the same in every column: say what it is.
        k = "off" if s.top_k is None else str(s.top_k)
        p = "off" if s.top_p is None else f"{s.top_p:g}"
        prefix = f" · prefix {escape(repr(s.prefix))}" if s.prefix else ""
        # GPT-2 continues a prompt in BPE tokens: no names, no training split to mark them against.
        rows, marks, unit, per = (("continuations", "", "token", "lp/tok") if is_pretrained(self.loaded)
                                  else ("names", "● train ◐ val ◑ test ★ new · ", "character", "lp/ch"))
        self._note(f"seed {s.seed} · top-k {k} · top-p {p}{prefix} · {s.n} {rows} each · "
                   f"{marks}H = entropy of the first {unit} (nats) · "
                   f"{per} = mean log p per {unit} under the model")
        for c in cols:
            widget = self.query_one(f"#sweep-{str(c.temperature).replace('.', '_')}", Static)
            sm = c.batch.summary
            lp = sm.mean_model_logprob_per_char if sm.mean_model_logprob_per_char is not None else \
                sm.mean_logprob_per_char
            lines = [f"[b]H {c.entropy:.2f}[/b]", f"new {sm.share_new:.0%}" if sm.known else "new ?",
                     f"{lp:.2f} {per}", ""]
            lines += [f"{GLYPH.get(x.membership, '?') if sm.known else ' '} {escape(x.text)}"
                      for x in c.batch.samples]
            widget.update("\n".join(lines))

    def action_seed(self, direction: int) -> None:
        self.settings = replace(self.settings, seed=self.settings.seed + direction)
        self._note("Computing…")
        self.compute()
