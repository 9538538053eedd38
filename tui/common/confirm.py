"""Questions in a modal box: a yes/no confirmation, and the one asked before a run starts.

Both go ahead only on an explicit key (y), and n or escape go back. The start question also has
buttons and opens with "Back" focused, so a stray Enter never starts anything.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from minigpt.control.run_processes import format_duration
from minigpt.text import markup_escape as escape
from minigpt.training.options import TrainConfig
from tui.workers import Result, background, post_result


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("y", "answer(True)", "Yes", show=True, id="confirm.yes"),
                Binding("n,escape", "answer(False)", "No", show=True, id="confirm.no")]

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
        heads = f"{cfg.n_heads} head{'s' if cfg.n_heads != 1 else ''}"
        return f"MiniGPT: d_model {cfg.d_model}, {heads}, {cfg.n_layers} layer{'s' if cfg.n_layers != 1 else ''}"
    if cfg.model == "mlp":
        return f"MLP: {cfg.mlp_context} characters of context, {cfg.mlp_hidden} hidden units"
    return "Bigram: a table of pair counts"


def describe_budget(cfg: TrainConfig) -> str:
    if cfg.model == "bigram":
        return "one pass of counting"
    if cfg.steps is not None:
        return f"{cfg.steps:,} steps, evaluated every {cfg.eval_interval:,}"
    return f"{format_duration(cfg.time_s)} of training, evaluated every {cfg.eval_interval:,} steps"


@dataclass
class SharingChecked(Result):
    """Whether another training runs now (``warning``: the line to show, None when none does)."""
    warning: str | None


@dataclass
class Estimated(Result):
    """The measured estimate, or why it could not be measured (``error``)."""
    estimate: object
    error: str | None


def measure_into(screen: ModalScreen, estimate) -> None:
    """In the screen's ``background`` worker: the sharing warning, then ``estimate()``, each
    posted to ``screen`` as a Result (a question answered before the measurement ended is gone, so
    they are dropped: tui.workers.Result)."""
    from minigpt.experiments.sharing import sharing_warning

    post_result(screen, SharingChecked(sharing_warning()))  # first: the measurement then pays for the sharing
    try:
        result = estimate()
    except Exception as e:
        post_result(screen, Estimated(None, f"{type(e).__name__}: {e}"))
        return
    post_result(screen, Estimated(result, None))


def show_sharing(screen: ModalScreen, warning: str | None) -> None:
    """The line that says another training runs now (hidden when none does)."""
    line = screen.query_one("#start-sharing", Static)
    line.update(f"[b]Shared cores.[/b] {escape(warning)}" if warning else "")
    line.display = bool(warning)


class StartQuestion(ModalScreen[bool]):
    """What both start questions share: Back focused first, the sharing line and the estimate
    filled in from ``measure()`` (a subclass's worker calling ``measure_into``), Start or Back."""

    def __init__(self):
        super().__init__()
        self.estimate = None  # the subclass's estimate once measured
        self.estimate_error: str | None = None

    def on_mount(self) -> None:
        self.query_one("#start-sharing", Static).display = False
        self.query_one("#start-no", Button).focus()
        self.measure()

    def measure(self) -> None:
        raise NotImplementedError

    def estimate_text(self, estimate) -> str:
        """The estimate line for a measured estimate."""
        raise NotImplementedError

    @on(SharingChecked)
    def _show_sharing(self, message: SharingChecked) -> None:
        show_sharing(self, message.warning)

    @on(Estimated)
    def _show_estimate(self, message: Estimated) -> None:
        self.estimate, self.estimate_error = message.estimate, message.error
        line = self.query_one("#start-estimate", Static)
        if message.estimate is None:
            line.update(f"estimated time: unknown ({escape(message.error or '')})")
        else:
            line.update(self.estimate_text(message.estimate))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "start-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class StartRunScreen(StartQuestion):
    """What is about to start (model, budget, device, estimated time, measured here): y starts it."""

    BINDINGS = [Binding("y", "answer(True)", "Start", show=True, id="start_run.yes"),
                Binding("n,escape", "answer(False)", "Back to the form", show=True, id="start_run.no")]

    def __init__(self, config: TrainConfig):
        super().__init__()
        self.config = config

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
            yield Static("", id="start-sharing", classes="sharing")
            with Horizontal(id="confirm-buttons"):
                yield Button("Start (y)", id="start-yes", variant="primary", compact=True)
                yield Button("Back (n)", id="start-no", compact=True)

    @background(what="Measuring the run's speed")
    def measure(self) -> None:
        from minigpt.control.estimate import estimate_run

        measure_into(self, lambda: estimate_run(self.config))

    def estimate_text(self, estimate) -> str:
        if self.config.model == "bigram":
            per_step = "counting"
        elif estimate.step_seconds < 1:
            per_step = f"{estimate.step_seconds * 1000:.0f} ms a step"
        else:
            per_step = f"{estimate.step_seconds:.1f} s a step"
        steps = f", about {estimate.steps:,} steps" if self.config.steps is None and self.config.model != "bigram" else ""
        return (f"estimated time: [b]about {format_duration(estimate.seconds)}[/b]{steps} "
                f"({per_step}, measured here; {estimate.n_params:,} parameters)")


class StartSweepScreen(StartQuestion):
    """The same question before a sweep: its runs, their sizes, and the time of all of them,
    measured here a run at a time (a few steps each). y starts it; Back is focused first."""

    BINDINGS = [Binding("y", "answer(True)", "Start", show=True, id="start_sweep.yes"),
                Binding("n,escape", "answer(False)", "Back", show=True, id="start_sweep.no")]

    def __init__(self, title: str, budget: str, configs: list[TrainConfig], n_params: list[int]):
        super().__init__()
        self.title_text, self.budget_text = title, budget
        self.configs, self.n_params = configs, n_params

    def compose(self) -> ComposeResult:
        low, high = min(self.n_params), max(self.n_params)
        sizes = f"{low:,} parameters" if low == high else f"{low:,} to {high:,} parameters"
        n = len(self.configs)
        with Vertical(id="confirm-box", classes="start-run"):
            yield Static(f"[b]Start this sweep of {n} run{'s' if n != 1 else ''} in the background?[/b]",
                         id="confirm-question")
            yield Static(escape(self.title_text), id="start-model")
            yield Static(escape(f"{self.budget_text} · {sizes}"), id="start-budget")
            yield Static("estimated time: measuring a few steps of each run here…", id="start-estimate")
            yield Static("", id="start-sharing", classes="sharing")
            with Horizontal(id="confirm-buttons"):
                yield Button("Start (y)", id="start-yes", variant="primary", compact=True)
                yield Button("Back (n)", id="start-no", compact=True)

    @background(what="Measuring the sweep's speed")
    def measure(self) -> None:
        from minigpt.control.estimate import estimate_sweep

        measure_into(self, lambda: estimate_sweep(self.configs))

    def estimate_text(self, estimate) -> str:
        longest = max(r.seconds for r in estimate.runs)
        return (f"estimated time: [b]about {format_duration(estimate.seconds)}[/b] for all runs, one "
                f"after another (the longest {format_duration(longest)}; measured here)")
