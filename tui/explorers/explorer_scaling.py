"""Why √d_k: random unit-variance q, k for d_k = 2 … 512; with and without the scaling, the std
of q·k, the largest softmax weight and the entropy (the course's d_k = 64 demo), as a plot. ctrl+l
loads a trained model: the same numbers measured on its own queries and keys, at its own d_k,
beside the random ones and as a point (*) on the plot."""

from __future__ import annotations

import math
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual_plotext import PlotextPlot

from minigpt.teaching.attention import scaling_demo
from minigpt.teaching.model_views import ScalingView, scaling_view
from minigpt.text import markup_escape
from tui.common import plot_theme  # noqa: F401 - readable axes in the ANSI themes
from tui.common.chart_axes import tick_labels, value_ticks
from tui.common.checkpoint_picker import LoadsCheckpoint
from tui.common.header import TutorHeader
from tui.workers import Result, background

D_KS = [2, 4, 8, 16, 32, 64, 128, 256, 512]
METRICS = [("max_weight", "largest weight (0.125 uniform, 1 one-hot)"),
           ("entropy", "entropy in nats (2.08 uniform)"),
           ("std", "std of the scores q·k")]


class ScalingExplorerScreen(LoadsCheckpoint, Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", show=True, id="explorer_scaling.back"),
                Binding("left", "move(-1)", "d_k ÷2", show=True, key_display="←", id="explorer_scaling.smaller"),
                Binding("right", "move(1)", "d_k ×2", show=True, key_display="→", id="explorer_scaling.larger"),
                Binding("v", "metric", "Next plot", show=True, id="explorer_scaling.metric"),
                LoadsCheckpoint.MODEL_BINDING]
    view_of = staticmethod(scaling_view)
    refusal_at = "#sc-model"
    lists_pretrained = True  # GPT-2 folders too: its own q·k at its d_k of 64
    picker_title = "Measure a trained model's q·k"

    def __init__(self) -> None:
        super().__init__()
        self.selected = D_KS.index(64)
        self.metric = 0
        self.demos = []
        self.model: ScalingView | None = None

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with Vertical(classes="explorer-body"):
            yield Static("[b]Why divide by √d_k?[/b]  q, k ~ N(0, 1): q·k has variance d_k, so large d_k "
                         "saturates the softmax. 8 keys, 2000 trials per d_k.", classes="explorer-text")
            yield Static("computing…", id="sc-table", classes="explorer-text")
            yield Static(id="sc-model", classes="explorer-text")
            yield PlotextPlot(id="sc-plot", classes="explorer-plot")
        yield Footer()

    def on_mount(self) -> None:
        self.compute()

    @dataclass
    class Computed(Result):
        demos: list

    @background(thread=True, exclusive=True)
    def compute(self) -> Computed:
        return self.Computed([scaling_demo(d) for d in D_KS])

    @on(Computed)
    def _done(self, message: Computed) -> None:
        self.demos = message.demos
        self.redraw()

    def show_model(self, path, view: ScalingView) -> None:
        self.model = view
        if view.d_k in D_KS:  # the random demo at the model's own d_k, for the comparison
            self.selected = D_KS.index(view.d_k)
        self.query_one("#sc-model", Static).update(
            f"[b]{markup_escape(view.label)}[/b] (d_k = {view.d_k}), its own q·k on names   * on the plot\n"
            f"std {view.std_raw:.3f} → {view.std_scaled:.3f} · largest weight {view.max_weight_raw:.3f} → "
            f"{view.max_weight_scaled:.3f} · entropy {view.entropy_raw:.3f} → {view.entropy_scaled:.3f}")
        self.redraw()

    def model_point(self, key: str) -> tuple[float, float] | None:
        """The loaded model's (raw, scaled) value of a plotted metric."""
        if self.model is None:
            return None
        return getattr(self.model, f"{key}_raw"), getattr(self.model, f"{key}_scaled")

    def action_move(self, step: int) -> None:
        self.selected = max(0, min(len(D_KS) - 1, self.selected + step))
        self.redraw()

    def action_metric(self) -> None:
        self.metric = (self.metric + 1) % len(METRICS)
        self.redraw()

    def values(self, key: str) -> tuple[list[float], list[float]]:
        pairs = {"max_weight": ("max_weight_raw", "max_weight_scaled"), "entropy": ("entropy_raw", "entropy_scaled"),
                 "std": ("std_raw", "std_scaled")}[key]
        return [getattr(d, pairs[0]) for d in self.demos], [getattr(d, pairs[1]) for d in self.demos]

    def redraw(self) -> None:
        if not self.demos:
            return
        d = self.demos[self.selected]
        self.query_one("#sc-table", Static).update(
            f"[b]d_k = {d.d_k}[/b] (←/→; √d_k = {math.sqrt(d.d_k):.2f})\n"
            f"                   without ÷√d_k    with ÷√d_k\n"
            f"std of scores      {d.std_raw:>14.3f}    {d.std_scaled:>10.3f}\n"
            f"largest weight     {d.max_weight_raw:>14.3f}    {d.max_weight_scaled:>10.3f}\n"
            f"entropy (nats)     {d.entropy_raw:>14.3f}    {d.entropy_scaled:>10.3f}")
        key, title = METRICS[self.metric]
        raw, scaled = self.values(key)
        plot = self.query_one(PlotextPlot)
        plt = plot.plt
        plt.clear_data()
        plt.clear_figure()
        xs = [math.log2(v) for v in D_KS]
        # Markers differ (x vs o) and the legend in the title names them, so no-colour terminals
        # still tell them apart and no curve hides under a legend box.
        plt.plot(xs, raw, marker="x")
        plt.plot(xs, scaled, marker="o")
        plt.vline(math.log2(d.d_k))
        point = self.model_point(key)
        if point is not None:
            plt.scatter([math.log2(self.model.d_k)] * 2, list(point), marker="*")
            raw, scaled = raw + [point[0]], scaled + [point[1]]  # the axis covers the model's point
        plt.xticks(xs, [str(v) for v in D_KS])
        lo, hi = min(raw + scaled), max(raw + scaled)
        ticks = [t for t in value_ticks(lo, hi, 4) if lo <= t <= hi]
        plt.yticks(ticks, tick_labels(ticks))
        plt.title(f"{title}   x without ÷√d_k  o with ÷√d_k")
        plt.xlabel("d_k")
        plot.refresh()
