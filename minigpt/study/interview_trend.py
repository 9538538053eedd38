"""The interview trend: past interviews' scores and the readiness each started from, over time.

:func:`points` reads the ``interview`` table (migration 5), oldest first, leaving out those ended
early that the learner did not keep (``in_trend``, migration 6); the readiness an interview
started from is in its report's JSON (``readiness``, absent from reports kept before it was
recorded). :func:`chart_text` draws them as plain text for ``minigpt progress`` (the app draws
the same points with plotext, ``tui.interview.interview_trend``): percent up the side, one column
per interview in the order they were taken, the first and last dates under the axis. Markers tell
the two series apart without colour: ``●`` score, ``○`` readiness, ``◉`` both in one cell.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from minigpt.errors import BadRowError
from minigpt.store import Store
from minigpt.study import rows, scheduler
from minigpt.text_chart import Scale, framed

SCORE, READINESS, BOTH = "●", "○", "◉"
AXIS_MARGIN = 5  # "100%" and the axis line


@dataclass(frozen=True)
class TrendPoint:
    started_at: str               # ISO 8601, UTC
    score: float                  # 0..1
    questions: int
    readiness: float | None = None  # overall readiness when it started; None for older reports

    @property
    def day(self) -> str:
        """``YYYY-MM-DD`` of the start (the stored text's date part)."""
        return self.started_at[:10]


def points(store: Store, limit: int = 20) -> list[TrendPoint]:
    """The last ``limit`` interviews in the trend, oldest first (one ended early is left out
    unless the learner kept it: ``in_trend``, migration 6)."""
    found = store.conn.execute("SELECT id, started_at, score, questions, minutes, report FROM interview "
                               "WHERE in_trend ORDER BY started_at DESC, id DESC LIMIT ?", (limit,)).fetchall()
    out = []
    for row in reversed(found):
        try:  # a row whose time, score, count or length is not one the tutor writes is left out
            scheduler.from_iso(row["started_at"])
            score, questions = rows.fraction(row["score"]), rows.count(row["questions"])
            rows.positive(row["minutes"])
        except BadRowError:
            rows.skip(store, "interview", row["id"])
            continue
        try:
            ready = json.loads(row["report"]).get("readiness")
        except (TypeError, ValueError, AttributeError, RecursionError):  # a report that is not a JSON object
            ready = None
        ready = float(ready) if isinstance(ready, int | float) and 0 <= ready <= 1 else None
        out.append(TrendPoint(row["started_at"], score, questions, ready))
    return out


def summary(past: list[TrendPoint]) -> str:
    """One line: how many interviews, the first and last score."""
    if not past:
        return ""
    n, first, last = len(past), past[0], past[-1]
    if n == 1:
        return f"1 interview: {round(100 * last.score)}% on {last.day}"
    return (f"{n} interviews: {round(100 * first.score)}% on {first.day} → "
            f"{round(100 * last.score)}% on {last.day}")


def headline(past: list[TrendPoint]) -> str:
    """The short form: "3 interviews: 40% → 70%"."""
    if not past:
        return ""
    if len(past) == 1:
        return f"1 interview: {round(100 * past[0].score)}%"
    return f"{len(past)} interviews: {round(100 * past[0].score)}% → {round(100 * past[-1].score)}%"


def columns(n: int, width: int) -> list[int]:
    """The column of each of ``n`` interviews across ``width`` cells: spread evenly, one in the
    middle when there is only one."""
    if n == 1:
        return [width // 2]
    return [round(i * (width - 1) / (n - 1)) for i in range(n)]


def chart_text(past: list[TrendPoint], width: int = 72, height: int = 12) -> str:
    """The trend as plain text in at most ``height`` lines (title, plot, axis, dates, legend)."""
    if not past:
        return "No interview taken yet."
    plot_w = max(width - AXIS_MARGIN - 1, 8)
    plot_h = max(height - 4, 3)
    plot_h -= 1 - plot_h % 2  # odd, so the middle row is exactly 50%
    past = past[-plot_w:]  # one column each at least
    grid = [[" "] * plot_w for _ in range(plot_h)]
    percent = Scale(0.0, 1.0, plot_h)

    def row(value: float) -> int:
        return plot_h - 1 - percent.cell(value)

    for col, p in zip(columns(len(past), plot_w), past, strict=True):
        if p.readiness is not None:
            grid[row(p.readiness)][col] = READINESS
        r = row(p.score)
        grid[r][col] = BOTH if grid[r][col] == READINESS else SCORE
    title = summary(past)
    if len(title) > width:  # a narrow chart: the scores only
        title = headline(past)
    lines = [title[:width]]
    lines += framed(grid, {0: "100%", plot_h // 2: "50%", plot_h - 1: "0%"}, AXIS_MARGIN - 1)
    first, last = past[0].day, past[-1].day
    if plot_w < 2 * len(first) + 1:  # narrow: month and day only
        first, last = first[5:], last[5:]
    dates = first if len(past) == 1 or first == last else first + last.rjust(plot_w - len(first))
    lines.append(" " * AXIS_MARGIN + dates)
    legend = f"{SCORE} score  {READINESS} readiness at the start  {BOTH} both · one column per interview"
    if len(legend) > width:
        legend = f"{SCORE} score {READINESS} readiness {BOTH} both"
    lines.append(legend[:width])
    return "\n".join(line.rstrip() for line in lines)
