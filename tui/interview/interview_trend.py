"""The interview trend as a plotext chart: each past interview's score, and the readiness it
started from, one x position per interview in the order taken, dates under the axis.

The points come from minigpt.study.interview_trend (the same ones ``minigpt progress`` draws as
text). The y axis is always 0..100 % and the x axis is widened by half an interview either side,
so one interview (or several with one score) never gives plotext an empty range to divide by.
Series are told apart by marker as well as colour: ● score, ○ readiness.
"""

from __future__ import annotations

from textual_plotext import PlotextPlot

from minigpt.study.interview_trend import READINESS, SCORE, TrendPoint
from tui.common import plot_theme  # noqa: F401 - readable axes in the ANSI themes


def date_ticks(past: list[TrendPoint], width: int) -> tuple[list[int], list[str]]:
    """x positions (1-based) and ``MM-DD`` labels, thinned to one per 8 columns or so; a label is
    written only where the day changes, and the last interview always gets one."""
    if not past:
        return [], []
    room = max(1, (width - 8) // 8)
    every = max(1, -(-len(past) // room))
    xs, labels, last_day = [], [], ""
    for i, p in enumerate(past):
        if (i % every == 0 or i == len(past) - 1) and p.day != last_day:
            if xs and i == len(past) - 1 and i - (xs[-1] - 1) < every:
                xs.pop(), labels.pop()  # too close to the one before: the last one wins
            xs.append(i + 1)
            labels.append(p.day[5:])
            last_day = p.day
    return xs, labels


class InterviewTrendChart(PlotextPlot):
    """``set_points`` draws; ``drawn`` keeps the plotted series for tests."""

    def __init__(self, title: str = "", **kwargs):
        super().__init__(**kwargs)
        self.chart_title = title  # before the legend, in the chart's top line
        self.past: list[TrendPoint] = []
        self.drawn: dict[str, tuple[list[int], list[float]]] = {}

    def set_points(self, past: list[TrendPoint]) -> None:
        self.past = list(past)
        self._draw()

    def on_resize(self) -> None:
        self._draw()  # the date labels are thinned to the width

    def _draw(self) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        past = self.past
        xs = list(range(1, len(past) + 1))
        score = [100 * p.score for p in past]
        ready = [(x, 100 * p.readiness) for x, p in zip(xs, past, strict=True) if p.readiness is not None]
        self.drawn = {"score": (xs, score), "readiness": ([x for x, _ in ready], [y for _, y in ready])}
        legend = f"{SCORE} score  {READINESS} readiness at the start" if ready else f"{SCORE} score"
        full = f"{self.chart_title}   {legend}" if self.chart_title else legend
        plt.title(full if len(full) <= self.size.width - 2 else legend)  # plotext drops a longer one
        if past:  # dotted lines join the interviews, in whole cells so the markers sit on them
            if ready:
                plt.plot([x for x, _ in ready], [y for _, y in ready], marker="·")
                plt.scatter([x for x, _ in ready], [y for _, y in ready], marker=READINESS)
            plt.plot(xs, score, marker="·")
            plt.scatter(xs, score, marker=SCORE)
            ticks, labels = date_ticks(past, max(self.size.width, 20))
            plt.xticks(ticks, labels)
        plt.xlim(0.5, max(len(past), 1) + 0.5)
        plt.ylim(0, 100)
        ticks = [0, 25, 50, 75, 100] if self.size.height >= 14 else [0, 50, 100]
        plt.yticks(ticks, [f"{t}%" for t in ticks])
        self.refresh()
