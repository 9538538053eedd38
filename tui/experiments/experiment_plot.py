"""The experiment's own plot (log-log scaling with its fit, dropout gap, positions, lr), drawn as
text by minigpt.experiments to the widget's size, with the sentences that read it underneath."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from minigpt.experiments import plots


class PlotCanvas(Widget):
    """Plain text, redrawn at the widget's size whenever the plot or the size changes."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.plot: plots.PlotData | None = None
        self.text = ""  # what the last render drew (tests read it)

    def show(self, plot: plots.PlotData) -> None:
        self.plot = plot
        self.refresh()

    def render(self) -> Text:
        if self.plot is None:
            self.text = "…"
        else:
            width, height = self.content_size.width, self.content_size.height
            self.text = plots.render(self.plot, width=max(width, 30), height=max(height, 8))
        return Text(self.text, no_wrap=True, overflow="crop")


class ExperimentPlot(Vertical):
    def compose(self) -> ComposeResult:
        yield PlotCanvas(id="exp-plot-canvas")
        yield Static(id="exp-plot-notes")

    @property
    def canvas(self) -> PlotCanvas:
        return self.query_one(PlotCanvas)

    def show(self, plot: plots.PlotData) -> None:
        self.canvas.show(plot)
        notes = self.query_one("#exp-plot-notes", Static)
        notes.update(Text("\n".join(f"• {n}" for n in plot.notes)))
