"""Questions in a modal box: a yes/no confirmation, and the one asked before a run starts.

Both go ahead only on an explicit key (y), and n or escape go back. The start question also has
buttons and opens with "Back" focused, so a stray Enter never starts anything.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from minigpt.control.workers import format_duration
from minigpt.text import markup_escape as escape
from minigpt.training.options import TrainConfig
from tui.workers import background


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("y", "answer(True)", "Yes", show=True),
                Binding("n,escape", "answer(False)", "No", show=True)]

    def __init__(self, question: str):
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(self.question, id="confirm-question")
            yield Static("[b]y[/b] yes    [b]n[/b] / [b]escape[/b] no", id="confirm-keys")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


def describe_model(cfg: TrainConfig) -> str:
    if cfg.model == "gpt":
        return f"MiniGPT: d_model {cfg.d_model}, {cfg.n_heads} heads, {cfg.n_layers} layers"
    if cfg.model == "mlp":
        return f"MLP: {cfg.mlp_context} characters of context, {cfg.mlp_hidden} hidden units"
    return "Bigram: a table of pair counts"


def describe_budget(cfg: TrainConfig) -> str:
    if cfg.model == "bigram":
        return "one pass of counting"
    if cfg.steps is not None:
        return f"{cfg.steps:,} steps, evaluated every {cfg.eval_interval:,}"
    return f"{format_duration(cfg.time_s)} of training, evaluated every {cfg.eval_interval:,} steps"


class StartRunScreen(ModalScreen[bool]):
    """What is about to start (model, budget, device, estimated time, measured here): y starts it."""

    BINDINGS = [Binding("y", "answer(True)", "Start", show=True),
                Binding("n,escape", "answer(False)", "Back to the form", show=True)]

    def __init__(self, config: TrainConfig):
        super().__init__()
        self.config = config
        self.estimate = None  # a RunEstimate once measured
        self.estimate_error: str | None = None

    def compose(self) -> ComposeResult:
        from minigpt.training.devices import resolve_device

        cfg = self.config
        device = str(resolve_device(cfg.device))
        with Vertical(id="confirm-box", classes="start-run"):
            yield Static("[b]Start this run in the background?[/b]", id="confirm-question")
            yield Static(escape(describe_model(cfg)), id="start-model")
            yield Static(escape(describe_budget(cfg)), id="start-budget")
            yield Static(f"device: [b]{escape(device)}[/b]" + (" (auto)" if cfg.device == "auto" else ""),
                         id="start-device")
            yield Static("estimated time: measuring a few steps here…", id="start-estimate")
            with Horizontal(id="confirm-buttons"):
                yield Button("Start (y)", id="start-yes", variant="primary", compact=True)
                yield Button("Back (n)", id="start-no", compact=True)

    def on_mount(self) -> None:
        self.query_one("#start-no", Button).focus()
        self.measure()

    @background(what="Measuring the run's speed")
    def measure(self) -> None:
        from minigpt.control.estimate import estimate_run

        try:
            estimate = estimate_run(self.config)
        except Exception as e:
            self.app.call_from_thread(self._show_estimate, None, f"{type(e).__name__}: {e}")
            return
        self.app.call_from_thread(self._show_estimate, estimate, None)

    def _show_estimate(self, estimate, error: str | None) -> None:
        self.estimate, self.estimate_error = estimate, error
        if not self.is_attached:
            return
        line = self.query_one("#start-estimate", Static)
        if estimate is None:
            line.update(f"estimated time: unknown ({escape(error or '')})")
            return
        if self.config.model == "bigram":
            per_step = "counting"
        elif estimate.step_seconds < 1:
            per_step = f"{estimate.step_seconds * 1000:.0f} ms a step"
        else:
            per_step = f"{estimate.step_seconds:.1f} s a step"
        steps = f", about {estimate.steps:,} steps" if self.config.steps is None and self.config.model != "bigram" else ""
        line.update(f"estimated time: [b]about {format_duration(estimate.seconds)}[/b]{steps} "
                    f"({per_step}, measured here; {estimate.n_params:,} parameters)")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "start-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
