"""A plotext line chart fed incrementally: keeps the full series, draws a downsampled copy.

Redraws are throttled: new points only mark the chart dirty, and a timer rebuilds the plot at most
``MAX_REDRAWS_PER_S`` times a second, downsampled (min/max per bucket, by minigpt.control.run_processes) to
about twice the chart's width, so 100k points cost no more to draw than 200.
Series are told apart by marker and legend label, not only by colour (NO_COLOR, ansi themes).
The legend sits in the title line, outside the plot, so it never hides a point; step axes get
whole-number ticks and value axes round ones (engineering notation for learning rates), from
``tui.common.chart_axes``. ``smoothing`` (TensorBoard's debiased moving average) and ``log_y``
change how the series are drawn, never the series themselves.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from textual_plotext import PlotextPlot

from minigpt.control.run_processes import downsample
from tui.common import plot_theme  # noqa: F401 - readable axes in the ANSI themes
from tui.common.chart_axes import smooth, step_label, step_ticks, tick_labels, value_ticks

MAX_REDRAWS_PER_S = 3
LEGEND_LINE = "──"  # how a line series (braille marker) is shown in the legend


def log_ticks(lo: float, hi: float, count: int) -> list[float]:
    """Ticks for a log axis: 1-2-5 multiples of powers of ten across wide ranges, round values
    otherwise; all inside [lo, hi]."""
    if hi / lo > 10:
        ticks = [m * 10 ** k for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
                 for m in (1, 2, 5)]
        ticks = [t for t in ticks if lo <= t <= hi]
        if len(ticks) > count:
            ticks = [t for t in ticks if f"{t:e}".startswith("1")] or ticks
        return ticks or [lo]
    return [t for t in value_ticks(lo, hi, count) if lo <= t <= hi and t > 0] or [lo]


@dataclass
class Series:
    label: str
    marker: str
    scatter: bool
    xs: list
    ys: list
    color: str | None = None  # a plotext colour name; None: plotext's own sequence


HEAD_FRACTION = 0.1  # the first tenth of the steps: the fall from the initial loss


def focused_top(points: list[tuple[float, float]], x_lo: float, x_hi: float, y_lo: float, y_hi: float) -> float:
    """The top of the y axis: the highest value after the first tenth of the steps when the
    initial loss would otherwise squash the part that matters into a few rows (the early points
    above it leave the chart at its top edge)."""
    cut = x_lo + HEAD_FRACTION * (x_hi - x_lo)
    rest = [y for x, y in points if x >= cut]
    if len(rest) < 2:
        return y_hi
    top = max(rest)
    if top <= y_lo or (y_hi - y_lo) <= 2 * (top - y_lo):
        return y_hi  # the head is not much higher: keep everything in view
    return top + 0.1 * (top - y_lo)


class LossChart(PlotextPlot):
    """Several named series on one chart; ``set_series`` / ``extend`` then the timer redraws."""

    def __init__(self, title: str, *, xlabel: str = "step", ylabel: str = "", legend: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.chart_title = title
        self.xlabel, self.ylabel = xlabel, ylabel
        self.legend = legend  # False: the screen shows its own legend beside the chart
        self.smoothing = 0.0  # 0 … <1: weight of TensorBoard's moving average
        self.log_y = False
        self.series: dict[str, Series] = {}
        self.references: dict[str, tuple[float, str]] = {}  # horizontal lines: name → (y, label)
        self.marker_step: int | None = None  # a vertical line at a past step (the step scrubber)
        self.drawn: dict[str, tuple[list, list]] = {}  # what the last redraw plotted (tests read it)
        self.redraws = 0
        self.last_build_ms = 0.0  # time plotext took to build the last frame
        self._dirty = True
        self._last_size = (0, 0)
        self._frame = None  # (key, built text): Textual re-renders for many reasons; plotext is slow

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(1 / MAX_REDRAWS_PER_S, self._redraw_if_needed)
        self._redraw()

    def set_series(self, name: str, xs: list, ys: list, *, label: str | None = None, marker: str = "braille",
                   scatter: bool = False, color: str | None = None) -> None:
        """Replace a series (the lists are kept by reference: extend them and call ``touch``).

        ``scatter`` draws points only (sparse series such as val loss, one point per evaluation).
        """
        self.series[name] = Series(label or name, marker, scatter, xs, ys, color)
        self._dirty = True

    def set_reference(self, name: str, y: float | None, label: str) -> None:
        """A horizontal line across the chart at ``y`` (None removes it), e.g. a baseline's loss."""
        if y is None:
            self.references.pop(name, None)
        else:
            self.references[name] = (y, label)
        self._dirty = True

    def set_marker(self, step: int | None) -> None:
        self.marker_step = step
        self._dirty = True

    def touch(self) -> None:
        self._dirty = True

    def clear_series(self) -> None:
        self.series.clear()
        self._dirty = True

    def points_budget(self) -> int:
        return max(2 * self.size.width, 20)

    def _redraw_if_needed(self) -> None:
        if self._dirty or self.size != self._last_size:
            self._redraw()

    def legend_text(self) -> str:
        return "  ".join(f"{LEGEND_LINE if s.marker == 'braille' else s.marker} {s.label}"
                         for s in self.series.values() if s.xs)  # references: the screen names them

    def _redraw(self) -> None:
        """Rebuild the plot from downsampled series and refresh this widget (render builds it)."""
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        legend = self.legend_text() if self.legend else ""
        plt.title(f"{self.chart_title}   {legend}" if legend else self.chart_title)
        plt.xlabel(self.xlabel)
        if self.ylabel:
            plt.ylabel(self.ylabel)
        self.drawn = {}
        budget = self.points_budget()
        log_y = self.log_y and all(y > 0 for s in self.series.values() for y in s.ys)
        for name, s in self.series.items():
            if not s.xs:
                continue
            ys = smooth(s.ys, self.smoothing) if self.smoothing and not s.scatter else s.ys
            xs, ys = downsample(s.xs, ys, budget)
            self.drawn[name] = (xs, ys)
            draw = plt.scatter if s.scatter else plt.plot
            extra = {"color": s.color} if s.color else {}
            draw(xs, [math.log10(y) for y in ys] if log_y else ys, marker=s.marker, **extra)  # legend: title
        self._draw_references(log_y)
        if self.marker_step is not None and self.drawn:
            self.plt.vline(self.marker_step, "red+")
        self._set_ticks(log_y)
        self._dirty = False
        self._last_size = self.size
        self.redraws += 1
        self.refresh()

    def _draw_references(self, log_y: bool) -> None:
        """Each reference as a dotted line over the steps the series cover."""
        steps = [x for xs, _ in self.drawn.values() for x in xs]
        if not steps:
            return
        x_lo, x_hi = min(0, min(steps)), max(steps)
        for name, (y, _label) in self.references.items():
            if log_y and y <= 0:
                continue
            xs = [x_lo + (x_hi - x_lo) * i / 40 for i in range(41)]
            self.drawn[f"ref:{name}"] = (xs, [y] * len(xs))
            self.plt.scatter(xs, [math.log10(y) if log_y else y] * len(xs), marker="┄")

    def _set_ticks(self, log_y: bool) -> None:
        """Whole-number step ticks and round value ticks in place of plotext's even divisions."""
        points = [(x, y) for xs, ys in self.drawn.values() for x, y in zip(xs, ys)]
        if not points:
            return
        plt = self.plt
        width, height = max(self.size.width, 20), max(self.size.height, 6)
        # Steps start at 0 on the axis, so runs of different lengths line up and one point shows.
        x_lo, x_hi = min(0, min(p[0] for p in points)), max(p[0] for p in points)
        if x_hi > x_lo:
            plt.xlim(x_lo, x_hi)
        xt = step_ticks(x_lo, x_hi, max(2, width // 14))
        xt = [t for t in xt if x_lo <= t <= x_hi] or [round(x_lo)]
        plt.xticks(xt, [step_label(t) for t in xt])
        y_lo, y_hi = min(p[1] for p in points), max(p[1] for p in points)
        if not log_y:
            y_hi = focused_top(points, x_lo, x_hi, y_lo, y_hi)
            if y_hi <= y_lo:  # one point or a flat curve: plotext divides by the axis height
                pad = max(abs(y_lo) * 0.05, 1e-3)
                y_lo, y_hi = y_lo - pad, y_hi + pad
            plt.ylim(y_lo, y_hi)
        count = max(3, (height - 4) // 3)
        if log_y:
            yt = log_ticks(y_lo, y_hi, count)
            plt.yticks([math.log10(t) for t in yt], tick_labels(yt))
        else:
            yt = [t for t in value_ticks(y_lo, y_hi, count) if y_lo <= t <= y_hi] or [y_lo]
            plt.yticks(yt, tick_labels(yt))

    def render(self):
        key = (self.redraws, self.size, self.app.theme)
        if self._frame is not None and self._frame[0] == key:
            return self._frame[1]
        start = time.perf_counter()
        result = super().render()
        self.last_build_ms = (time.perf_counter() - start) * 1000
        self._frame = (key, result)
        return result
