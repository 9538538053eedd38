"""Step mode: build one name a character at a time and see the whole sampling pipeline each step.

Space lets the model sample the next character (from the playground's seed); typing a character
picks it instead. Each step is a single forward pass of a small model (about a millisecond), so it
runs directly instead of in a worker.
"""

from __future__ import annotations

import math

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from minigpt.errors import SamplingError
from minigpt.playground.inspection import Stepper
from minigpt.text import markup_escape as escape
from tui.common.header import TutorHeader
from tui.playground.playground_bars import DistributionTable, show_char

WHERE = {"train": "● in the training data", "val": "◐ in the validation split",
         "test": "◑ in the test split", "new": "★ new: not in the data"}


class StepScreen(Screen):
    PALETTE_PREFIX = "Step mode"
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", show=True, id="playground_step.back"),
        Binding("space,right", "sample", "Sample", key_display="space", show=True, id="playground_step.sample"),
        Binding("backspace,left", "undo", "Undo", key_display="⌫", show=True, id="playground_step.undo"),
        Binding("enter", "restart", "New name", show=True, id="playground_step.restart"),
        # One footer entry for the pair; ? help lists both.
        Binding("minus", "temperature(-1)", "Temp", key_display="-/+", show=True, id="playground_step.temperature_down"),
        Binding("plus,equals_sign", "temperature(1)", "Temperature +0.1", key_display="+", show=False, id="playground_step.temperature_up"),
    ]

    def __init__(self, loaded, settings):
        super().__init__()
        self.stepper = Stepper(loaded, settings)
        self.last = ""  # what the last step did, in words

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        yield Static(id="step-name")
        yield DistributionTable(id="step-table")
        yield Static(id="step-status")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "step mode"
        self.last = "Press space to let the model sample, or type a character to pick it."
        self.render_state()

    def render_state(self) -> None:
        st, s = self.stepper, self.stepper.settings
        k = "off" if s.top_k is None else s.top_k
        p = "off" if s.top_p is None else f"{s.top_p:g}"
        cursor = "" if st.finished else "▌"
        steps = " ".join(f"{show_char(c)} {p_:.2f}" for c, p_ in st.history[-6:])
        lines = [f"[b]Name:[/b] [b $accent]{escape(st.text)}[/]{cursor}   "
                 f"log p {st.logprob:.2f} over {len(st.history)} steps   "
                 f"[$text-muted]T {s.temperature:g} · top-k {k} · top-p {p}[/]"]
        if steps:
            lines.append(f"[$text-muted]last steps: {escape(steps)}[/]")
        self.query_one("#step-name", Static).update("\n".join(lines))
        table = self.query_one("#step-table", DistributionTable)
        if st.finished:
            where = WHERE.get(st.membership or "", "membership unknown (no training data)")
            table.update(f"[b]Finished:[/b] {escape(st.text) or '(empty)'}   total log p {st.logprob:.3f}   "
                         f"{where}\n\n[$text-muted]enter: new name · ⌫: undo the last step[/]")
        else:
            # As many rows as fit under the name box (about 15 at 80×24, all of them when taller).
            table.show(st.distribution, rows=max(5, self.size.height - 9), bar_width=max(10, self.size.width - 52))
        self.query_one("#step-status", Static).update(self.last)

    def _after(self, char: str, how: str) -> None:
        p = self.stepper.history[-1][1]
        self.last = f"{how} {show_char(char)} with probability {p:.3f} (log p {math.log(p):.2f})"
        self.render_state()

    def _error(self, e: Exception) -> None:
        self.last = f"[b $error]⚠ {escape(str(e))}[/]"
        self.render_state()

    def action_sample(self) -> None:
        try:
            char = self.stepper.sample()
        except SamplingError as e:
            return self._error(e)
        self._after(char, "Sampled")

    def on_key(self, event: events.Key) -> None:
        c = event.character
        bound = self._bound_keys()
        if c and c.isprintable() and c in self.stepper.loaded.vocab.stoi and event.key not in bound:
            event.stop()
            event.prevent_default()
            try:
                self.stepper.choose(c)
            except SamplingError as e:
                return self._error(e)
            self._after(c, "You picked")
        elif c and c.isprintable() and event.key not in bound:
            event.stop()
            self._error(SamplingError(f"{c!r} is not in the model's vocabulary "
                                      f"({''.join(self.stepper.loaded.vocab.chars)})"))

    def _bound_keys(self) -> set[str]:
        """The keys that run an action here now (the learner's keys, if the settings remap any)."""
        return set(self.active_bindings) | {"question_mark"}

    def action_undo(self) -> None:
        if self.stepper.undo():
            self.last = "Undid the last step."
        else:
            self.last = "Nothing to undo."
        self.render_state()

    def action_restart(self) -> None:
        self.stepper.reset(self.stepper.settings.prefix)
        self.last = "New name: press space to sample, or type a character."
        self.render_state()

    def action_temperature(self, direction: int) -> None:
        s = self.stepper.settings
        s.temperature = max(0.1, round(s.temperature + 0.1 * direction, 2))
        self.stepper.refresh()
        self.last = f"Temperature {s.temperature:g}: the bars show the new distribution."
        self.render_state()
