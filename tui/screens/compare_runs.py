"""Compare runs: val-loss curves overlaid, and the bigram / MLP / GPT table from the learner's runs.

The course's chapter 9 comparison, made from runs the learner trained: which model reaches the
lowest validation loss, and with how many parameters. Space adds or removes a run's curve.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from minigpt.control import workers as rc
from minigpt.runs import listing as runs
from tui.widgets.loss_chart import LossChart
from tui.widgets.training_panel import state_label

# Distinct markers so curves stay apart without colour (NO_COLOR, ansi themes).
MARKERS = ("●", "x", "+", "■", "◆", "o", "*", "#")
MAX_CURVES = len(MARKERS)


class CompareRunsScreen(Screen):
    BINDINGS = [
        Binding("space", "toggle", "Show/hide curve", show=True),
        Binding("escape", "back", "Back", show=True),
    ]

    def __init__(self):
        super().__init__()
        self.shown: list[str] = []  # run paths whose curve is drawn, in marker order
        self.rows: list[rc.ComparisonRow] = []
        self._paths: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        yield LossChart("val loss by run (lower is better)", id="compare-chart")
        yield Static(id="compare-hint")
        yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Compare runs"
        infos = runs.list_runs()
        self._paths = {i.name: str(i.path) for i in infos}
        self.rows = rc.comparison_rows(infos)
        # Start with the best run of each kind, then others, as long as they have val points.
        with_val = [r for r in self.rows if r.best_val is not None]
        best_per_kind = {}
        for r in with_val:
            best_per_kind.setdefault(r.model, r)
        ordered = list(best_per_kind.values()) + [r for r in with_val if r not in best_per_kind.values()]
        self.shown = [self._paths[r.name] for r in ordered[:4]]
        table = self.query_one(DataTable)
        table.add_columns("curve", "model", "run", "params", "steps", "best val", "test", "status")
        self._fill_table()
        self._draw()
        table.focus()
        if not self.rows:
            self.query_one("#compare-hint", Static).update(
                "No runs yet. Train a bigram, an MLP and a GPT (Training → n) to compare them here.")
        else:
            self.query_one("#compare-hint", Static).update(
                "Space shows/hides the highlighted run's curve; markers in the chart match the first column.")

    def _marker(self, path: str) -> str:
        return MARKERS[self.shown.index(path)] if path in self.shown else " "

    def _fill_table(self) -> None:
        table = self.query_one(DataTable)
        keep = table.cursor_row
        table.clear()
        for r in self.rows:
            path = self._paths[r.name]
            table.add_row(self._marker(path), r.model.upper(), r.name,
                          f"{r.n_params:,}" if r.n_params else "–", str(r.steps),
                          f"{r.best_val:.4f}" if r.best_val is not None else "–",
                          f"{r.test_loss:.4f}" if r.test_loss is not None else "–", state_label(r.status),
                          key=path)
        if self.rows:
            table.move_cursor(row=min(keep, len(self.rows) - 1))

    def _draw(self) -> None:
        chart = self.query_one(LossChart)
        chart.clear_series()
        names = {v: k for k, v in self._paths.items()}
        for i, path in enumerate(self.shown):
            steps, vals = rc.val_curve(path)
            chart.set_series(path, steps, vals, label=names.get(path, path)[-16:],
                             marker=MARKERS[i], scatter=len(steps) < 30)

    def action_toggle(self) -> None:
        table = self.query_one(DataTable)
        if not self.rows:
            return
        path = self._paths[self.rows[table.cursor_row].name]
        if path in self.shown:
            self.shown.remove(path)
        elif len(self.shown) >= MAX_CURVES:
            self.notify(f"At most {MAX_CURVES} curves: hide one first", severity="warning")
            return
        else:
            self.shown.append(path)
        self._fill_table()
        self._draw()

    def action_back(self) -> None:
        self.app.pop_screen()

    def palette_commands(self):
        yield "Compare: show/hide the highlighted run", "Overlay its val-loss curve", self.action_toggle
