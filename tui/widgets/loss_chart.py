"""A plotext line chart fed incrementally: keeps the full series, draws a downsampled copy.

Redraws are throttled: new points only mark the chart dirty, and a timer rebuilds the plot at most
``MAX_REDRAWS_PER_S`` times a second, downsampled (min/max per bucket, by minigpt.control.workers) to
about twice the chart's width, so 100k points cost no more to draw than 200.
Series are told apart by marker and legend label, not only by colour (NO_COLOR, ansi themes).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual_plotext import PlotextPlot

from minigpt.control.workers import downsample

MAX_REDRAWS_PER_S = 3


@dataclass
class Series:
    label: str
    marker: str
    scatter: bool
    xs: list
    ys: list


class LossChart(PlotextPlot):
    """Several named series on one chart; ``set_series`` / ``extend`` then the timer redraws."""

    def __init__(self, title: str, *, xlabel: str = "step", ylabel: str = "", **kwargs):
        super().__init__(**kwargs)
        self.chart_title = title
        self.xlabel, self.ylabel = xlabel, ylabel
        self.series: dict[str, Series] = {}
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
                   scatter: bool = False) -> None:
        """Replace a series (the lists are kept by reference: extend them and call ``touch``).

        ``scatter`` draws points only (sparse series such as val loss, one point per evaluation).
        """
        self.series[name] = Series(label or name, marker, scatter, xs, ys)
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

    def _redraw(self) -> None:
        """Rebuild the plot from downsampled series and refresh this widget (render builds it)."""
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title(self.chart_title)
        plt.xlabel(self.xlabel)
        if self.ylabel:
            plt.ylabel(self.ylabel)
        self.drawn = {}
        budget = self.points_budget()
        for name, s in self.series.items():
            if not s.xs:
                continue
            xs, ys = downsample(s.xs, s.ys, budget)
            self.drawn[name] = (xs, ys)
            draw = plt.scatter if s.scatter else plt.plot
            draw(xs, ys, label=s.label, marker=s.marker)
        self._dirty = False
        self._last_size = self.size
        self.redraws += 1
        self.refresh()

    def render(self):
        key = (self.redraws, self.size, self.app.theme)
        if self._frame is not None and self._frame[0] == key:
            return self._frame[1]
        start = time.perf_counter()
        result = super().render()
        self.last_build_ms = (time.perf_counter() - start) * 1000
        self._frame = (key, result)
        return result
