"""Why √d_k: random unit-variance q, k for d_k = 2 … 512; with and without the scaling, the std
of q·k, the largest softmax weight and the entropy (the course's d_k = 64 demo), as a plot."""

from __future__ import annotations

import math

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Static
from textual_plotext import PlotextPlot

from minigpt.teaching.attention import scaling_demo
from tui.widgets import plot_theme  # noqa: F401 - readable axes in the ANSI themes
from tui.widgets.chart_axes import tick_labels, value_ticks
from tui.workers import background

D_KS = [2, 4, 8, 16, 32, 64, 128, 256, 512]
METRICS = [("max_weight", "largest weight (0.125 uniform, 1 one-hot)"),
           ("entropy", "entropy in nats (2.08 uniform)"),
           ("std", "std of the scores q·k")]


class ScalingExplorerScreen(Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", show=True),
                Binding("left", "move(-1)", "d_k ÷2", show=True, key_display="←"),
                Binding("right", "move(1)", "d_k ×2", show=True, key_display="→"),
                Binding("v", "metric", "Next plot", show=True)]

    def __init__(self) -> None:
        super().__init__()
        self.selected = D_KS.index(64)
        self.metric = 0
        self.demos = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(classes="explorer-body"):
            yield Static("[b]Why divide by √d_k?[/b]  q, k ~ N(0, 1): q·k has variance d_k, so large d_k "
                         "saturates the softmax. 8 keys, 2000 trials per d_k.", classes="explorer-text")
            yield Static("computing…", id="sc-table", classes="explorer-text")
            yield PlotextPlot(id="sc-plot", classes="explorer-plot")
        yield Footer()

    def on_mount(self) -> None:
        self.compute()

    @background(thread=True, exclusive=True)
    def compute(self) -> None:
        demos = [scaling_demo(d) for d in D_KS]
        self.app.call_from_thread(self._done, demos)

    def _done(self, demos) -> None:
        self.demos = demos
        self.redraw()

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
        plt.xticks(xs, [str(v) for v in D_KS])
        lo, hi = min(raw + scaled), max(raw + scaled)
        ticks = [t for t in value_ticks(lo, hi, 4) if lo <= t <= hi]
        plt.yticks(ticks, tick_labels(ticks))
        plt.title(f"{title}   x without ÷√d_k  o with ÷√d_k")
        plt.xlabel("d_k")
        plot.refresh()
