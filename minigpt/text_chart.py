"""Charts drawn as plain text: their scale, axes and marks, and the charts themselves, in one place.

Plain characters only (no colour codes), so the same text is printed by a command, shown by the
app and exported to a file; series are told apart by their marker. Here: the experiments' scatter
and bar charts (``minigpt sweep``, ``plot.txt``), the axes and scale of the interview trend
(``minigpt progress``) and the sparklines of the training panel's layer health. The app's own
plotted charts (loss curves, the interview trend, the study charts) are plotext's, in the app's area packages (``tui.common.loss_chart`` and others).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from minigpt.numbers import number_text

LINE_MARK = "·"
SPARK = "▁▂▃▄▅▆▇█"


@dataclass
class ChartSeries:
    label: str
    marker: str
    points: list[tuple[float, float]] = field(default_factory=list)
    line: bool = False  # joined by dots (a fitted curve, a frontier) rather than marked points


def compact_number(v: float) -> str:
    """A tick label in at most 7 characters: 12000 → 1.2e4, 0.005 → 5e-3, 2.13 → 2.13 (two
    significant digits in number_text's notation outside 0.01 to 10,000, four inside)."""
    if v == 0:
        return "0"
    if abs(v) >= 1e4 or abs(v) < 1e-2:
        return number_text(float(f"{v:.1e}"))
    return number_text(v, significant=4)


class Scale:
    """Values onto ``cells`` cells (the columns or the rows of a plot) from ``lo`` to ``hi``, which
    are log10 of the values on a log scale."""

    def __init__(self, lo: float, hi: float, cells: int, log: bool = False):
        self.lo, self.hi, self.cells, self.log = lo, hi, max(cells, 2), log

    @classmethod
    def fitted(cls, values: list[float], cells: int, log: bool = False) -> Scale:
        """A scale that spans ``values`` with a margin of 4% on each side."""
        t = [math.log10(v) if log else v for v in values]
        lo, hi = (min(t), max(t)) if t else (0.0, 1.0)
        pad = (hi - lo) * 0.04 or (abs(lo) * 0.05 or 0.5)
        return cls(lo - pad, hi + pad, cells, log)

    def f(self, v: float) -> float:
        return math.log10(v) if self.log else v

    def cell(self, v: float) -> int:
        frac = (self.f(v) - self.lo) / (self.hi - self.lo)
        return min(self.cells - 1, max(0, round(frac * (self.cells - 1))))

    def value(self, cell: int) -> float:
        t = self.lo + (self.hi - self.lo) * cell / (self.cells - 1)
        return 10**t if self.log else t


def framed(grid: list[list[str]], ticks: dict[int, str], margin: int) -> list[str]:
    """The grid's rows behind a left axis, then the bottom axis: a row in ``ticks`` starts with its
    label right-aligned in ``margin`` columns and ``┤``, any other row with ``│``; then ``└───``."""
    rows = [(ticks[r].rjust(margin) + "┤" if r in ticks else " " * margin + "│") + "".join(cells)
            for r, cells in enumerate(grid)]
    return rows + [" " * margin + "└" + "─" * len(grid[0])]


def spark(values: list[float | None], lo: float, hi: float) -> str:
    """One character per value, its height between ``lo`` and ``hi`` (a gap for None)."""
    cells = []
    for v in values:
        if v is None:
            cells.append(" ")
        else:
            f = (v - lo) / (hi - lo) if hi > lo else 0.5
            cells.append(SPARK[min(len(SPARK) - 1, max(0, int(f * len(SPARK))))])
    return "".join(cells)


def scatter_chart(series: list[ChartSeries], width: int = 72, height: int = 16, *, xlog: bool = False,
                  ylog: bool = False, title: str = "", xlabel: str = "", ylabel: str = "") -> str:
    """Points (and dotted lines) on axes; ``height`` counts every line of the result."""
    usable = [s for s in series if s.points]
    ok = lambda x, y: math.isfinite(x) and math.isfinite(y) and (x > 0 or not xlog) and (y > 0 or not ylog)  # noqa: E731
    pts = [(x, y) for s in usable for x, y in s.points if ok(x, y)]
    head = [title] if title else []
    legend = "  ".join(f"{s.marker if not s.line else LINE_MARK} {s.label}" for s in usable if s.label)
    if not pts:
        return "\n".join(head + ["(no finished runs to plot yet)"])
    margin = 8
    plot_w = max(width - margin - 1, 10)
    plot_h = max(height - len(head) - (1 if ylabel else 0) - 3, 3)
    xs = Scale.fitted([x for x, _ in pts], plot_w, xlog)
    ys = Scale.fitted([y for _, y in pts], plot_h, ylog)
    grid = [[" "] * plot_w for _ in range(plot_h)]
    for s in usable:
        good = sorted((p for p in s.points if ok(*p)), key=lambda p: p[0])
        if s.line:
            for (x0, y0), (x1, y1) in zip(good, good[1:]):
                c0, c1 = xs.cell(x0), xs.cell(x1)
                for c in range(c0, c1 + 1):
                    t = (c - c0) / (c1 - c0) if c1 > c0 else 0.0
                    y = ys.f(y0) + t * (ys.f(y1) - ys.f(y0))
                    row = plot_h - 1 - ys.cell(10**y if ylog else y)
                    if grid[row][c] == " ":
                        grid[row][c] = LINE_MARK
    for s in usable:
        if not s.line:
            for x, y in s.points:
                if ok(x, y):
                    grid[plot_h - 1 - ys.cell(y)][xs.cell(x)] = s.marker
    ticks = {0: ys.value(plot_h - 1), plot_h // 2: ys.value(plot_h - 1 - plot_h // 2), plot_h - 1: ys.value(0)}
    lines = list(head)
    if ylabel:
        lines.append(ylabel[: width])
    lines += framed(grid, {r: compact_number(v) + " " for r, v in ticks.items()}, margin)  # a space before ┤
    tick_cells = (0, plot_w // 2, plot_w - 1)
    tick_line = [" "] * (plot_w + margin + 1)
    for c in tick_cells:
        text = compact_number(xs.value(c))
        start = min(max(margin + 1 + c - len(text) // 2, 0), len(tick_line) - len(text))
        tick_line[start:start + len(text)] = list(text)
    legend = "   ".join(part for part in (f"x: {xlabel}" if xlabel else "", legend) if part)
    lines += ["".join(tick_line).rstrip(), legend]
    return "\n".join(line[:width].rstrip() for line in lines)


def bar_chart(groups: list[tuple[str, list[tuple[str, float | None]]]], width: int = 72, *, title: str = "",
              unit: str = "") -> str:
    """Horizontal bars, one group per category (for example: per encoding, val and long-name loss).

    Bars start a little below the smallest value so that differences of a few hundredths show.
    """
    values = [v for _, bars in groups for _, v in bars if v is not None and math.isfinite(v)]
    lines = [title] if title else []
    if not values:
        return "\n".join(lines + ["(no finished runs to plot yet)"])
    lo, hi = min(values), max(values)
    floor = lo - (hi - lo) * 0.25 - 1e-9 if hi > lo else lo * 0.9
    label_w = max((len(g) for g, _ in groups), default=0)
    name_w = max((len(n) for _, bars in groups for n, _ in bars), default=0)
    bar_w = max(width - label_w - name_w - 14, 5)
    for group, bars in groups:
        for i, (name, value) in enumerate(bars):
            head = (group if i == 0 else "").ljust(label_w) + " " + name.ljust(name_w)
            if value is None or not math.isfinite(value):
                lines.append(f"{head}  {'–':>7}")
                continue
            n = max(1, round((value - floor) / (hi - floor) * bar_w))
            lines.append(f"{head}  {value:7.4f} {'█' * n}{unit}")
    return "\n".join(lines)
