"""Drawings for the study stats: a due-forecast bar chart (plotext) and text blocks that read
without colour (glyph heatmap, bars with numbers). The numbers all come from minigpt.study.stats."""

from __future__ import annotations

from datetime import date, timedelta

from textual_plotext import PlotextPlot

from minigpt.study.formats import RATING_NAMES
from minigpt.study.stats import MIN_REVIEWS_TO_JUDGE, Activity, Retention
from minigpt.text import markup_escape as escape

# Reviews in a day -> glyph; the legend under the heatmap spells the ranges out.
LEVELS = [(0, "·"), (1, "░"), (3, "▒"), (6, "▓"), (10, "█")]


def glyph(n: int) -> str:
    out = LEVELS[0][1]
    for least, g in LEVELS:
        if n >= least:
            out = g
    return out


def heatmap_text(activity: Activity, today: date, weeks: int = 26) -> str:
    """Weeks as columns (oldest left), Monday..Sunday as rows, one glyph per day."""
    start = today - timedelta(days=today.weekday()) - timedelta(weeks=weeks - 1)
    rows = []
    for wd, name in enumerate(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]):
        cells = []
        for w in range(weeks):
            day = start + timedelta(weeks=w, days=wd)
            cells.append(" " if day > today else glyph(activity.per_day.get(day, 0)))
        rows.append(f"{name} {''.join(cells)}")
    legend = "  ".join(f"{g} {least}+" if least else f"{g} none" for least, g in LEVELS)
    total = sum(activity.per_day.values())
    return "\n".join(rows + [
        f"[dim]{legend} reviews a day · {weeks} weeks, oldest left[/dim]",
        f"Current streak [b]{activity.streak}[/b] day{'s' * (activity.streak != 1)} · "
        f"longest {activity.longest_streak} · {total} reviews in the last year"])


def retention_text(r: Retention) -> str:
    if r.true_retention is None:
        return (f"No scheduled reviews of already-learned cards yet.\n"
                f"Desired retention {r.desired:.0%}: answers will show here once cards come back due.")
    gap = (r.true_retention - r.desired) * 100
    where = "above" if gap >= 0 else "below"
    mark = "▲" if gap >= 0 else "▼"
    width = 40
    true_bar = "█" * round(r.true_retention * width)
    want_bar = "█" * round(r.desired * width)
    verdict = (f"{mark} {abs(gap):.1f} points {where} the target" if not r.reviews_to_judge else
               f"[dim]too few reviews to judge: {r.reviews_to_judge} more needed ({MIN_REVIEWS_TO_JUDGE} in all)[/dim]")
    return (f"True    {true_bar:<{width}} {r.true_retention:.1%}  ({r.reviews} reviews)\n"
            f"Desired {want_bar:<{width}} {r.desired:.0%}\n" + verdict)


def buttons_text(counts: dict[int, int], width: int = 30) -> str:
    total = sum(counts.values())
    if not total:
        return "No answers yet."
    top = max(counts.values())
    lines = []
    for r in (1, 2, 3, 4):
        n = counts.get(r, 0)
        bar = "█" * round(n / top * width) if top else ""
        lines.append(f"{r} {RATING_NAMES[r]:<5} {bar:<{width}} {n:>5}  ({n / total:.0%})")
    return "\n".join(lines)


def weakest_text(rows: list[tuple[str, int, bool]], titles: dict[str, str]) -> str:
    """The most-forgotten cards by name (``card_title``), never by their internal id."""
    if not rows:
        return "No lapses yet: no card has been forgotten after it was learned."
    out = []
    for card_id, lapses, leech in rows:
        title = titles.get(card_id, "(a card no longer in the decks)").replace("\n", " ")
        flag = " [b]LEECH[/b]" if leech else ""
        out.append(f"{lapses:>3} lapses{flag}  {escape(title[:62])}")
    return "\n".join(out)


class ForecastChart(PlotextPlot):
    """Bars of cards due per day; ``drawn`` keeps the plotted counts for tests."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.drawn: list[tuple[date, int]] = []

    def set_forecast(self, forecast: list[tuple[date, int]]) -> None:
        self.drawn = list(forecast)
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        labels = ["today" if i == 0 else f"+{i}" for i in range(len(forecast))]
        counts = [n for _, n in forecast]
        plt.bar(labels, counts, marker="█")
        plt.title("Cards due per day (next 14 days)")
        top = max(counts + [1])
        step = max(1, -(-top // 4))  # whole cards: at most five integer ticks
        plt.yticks(list(range(0, top + step, step)))
        self.refresh()
