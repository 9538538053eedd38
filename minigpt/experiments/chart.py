"""Charts drawn as plain text: the experiment's plot in the terminal, in the app and in a file.

Plain characters only (no colour codes), so the same text is printed by ``minigpt sweep``, shown
by the app and exported to ``plot.txt``; series are told apart by their marker.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

LINE_MARK = "·"


@dataclass
class ChartSeries:
    label: str
    marker: str
    points: list[tuple[float, float]] = field(default_factory=list)
    line: bool = False  # joined by dots (a fitted curve, a frontier) rather than marked points


def number(v: float) -> str:
    """A tick label in at most 7 characters: 12000 → 1.2e4, 0.005 → 5e-3, 2.13 → 2.13."""
    if v == 0:
        return "0"
    if abs(v) >= 1e4 or abs(v) < 1e-2:
        mantissa, exp = f"{v:.1e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa}e{int(exp)}"
    return f"{v:.4g}"


class _Scale:
    def __init__(self, values: list[float], log: bool, cells: int):
        self.log, self.cells = log, max(cells, 2)
        t = [self.f(v) for v in values]
        lo, hi = (min(t), max(t)) if t else (0.0, 1.0)
        pad = (hi - lo) * 0.04 or (abs(lo) * 0.05 or 0.5)
        self.lo, self.hi = lo - pad, hi + pad

    def f(self, v: float) -> float:
        return math.log10(v) if self.log else v

    def cell(self, v: float) -> int:
        frac = (self.f(v) - self.lo) / (self.hi - self.lo)
        return min(self.cells - 1, max(0, round(frac * (self.cells - 1))))

    def value(self, cell: int) -> float:
        t = self.lo + (self.hi - self.lo) * cell / (self.cells - 1)
        return 10**t if self.log else t


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
    xs = _Scale([x for x, _ in pts], xlog, plot_w)
    ys = _Scale([y for _, y in pts], ylog, plot_h)
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
    for r in range(plot_h):
        label = number(ticks[r]).rjust(margin - 1) + " ┤" if r in ticks else " " * margin + "│"
        lines.append(label + "".join(grid[r]))
    axis = " " * margin + "└" + "─" * plot_w
    tick_cells = (0, plot_w // 2, plot_w - 1)
    tick_line = [" "] * (plot_w + margin + 1)
    for c in tick_cells:
        text = number(xs.value(c))
        start = min(max(margin + 1 + c - len(text) // 2, 0), len(tick_line) - len(text))
        tick_line[start:start + len(text)] = list(text)
    legend = "   ".join(part for part in (f"x: {xlabel}" if xlabel else "", legend) if part)
    lines += [axis, "".join(tick_line).rstrip(), legend]
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
