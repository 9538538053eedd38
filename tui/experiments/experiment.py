"""One experiment, live: the table of runs, the overlay of their val curves and the experiment's own
plot (points for finished runs only), with pause, resume, stop and export.

Everything comes from the experiment's folder (minigpt.experiments.results), read once a second
and incrementally, so it follows a sweep started by this app, an earlier one or ``minigpt sweep``.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from minigpt import serving_policy
from minigpt.errors import ConfigError
from minigpt.experiments import exports, folder, plots, results, sweep_runner
from minigpt.experiments.spec import value_text
from minigpt.runs.metrics import RunMetrics
from minigpt.text import markup_escape
from tui import navigation
from tui.common.confirm import ConfirmScreen
from tui.common.header import TutorHeader
from tui.common.loss_chart import LossChart
from tui.experiments.experiment_plot import ExperimentPlot
from tui.workers import background

POLL_S = 1.0
MARKERS = ("●", "x", "+", "■", "◆", "o", "*", "#")
TABS = ("runs", "curves", "plot")
STATE_STYLE = {"finished": "green", "failed": "red", "interrupted": "red", "running": "yellow"}


class ExperimentScreen(Screen):
    PALETTE_PREFIX = "Experiment"
    BINDINGS = [
        Binding("1", "tab('runs')", "Runs", show=False, id="experiment.tab_runs"),
        Binding("2", "tab('curves')", "Curves", show=False, id="experiment.tab_curves"),
        Binding("3", "tab('plot')", "Plot", show=False, id="experiment.tab_plot"),
        Binding("enter", "watch", "Watch run", show=True, id="experiment.watch"),
        Binding("p", "pause", "Pause", show=True, id="experiment.pause"),
        Binding("r", "resume", "Resume", show=True, id="experiment.resume"),
        Binding("x", "stop", "Stop", show=True, id="experiment.stop"),
        Binding("e", "export", "Export", show=True, id="experiment.export"),
        Binding("escape", "back", "Back", show=True, id="experiment.back"),
    ]

    def __init__(self, exp_dir: Path | str):
        super().__init__()
        self.exp_dir = Path(exp_dir)
        self.experiment: folder.Experiment | None = None
        self.results: results.ExperimentResults | None = None
        self.curves: dict[str, RunMetrics] = {}
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        yield Static(id="exp-summary")
        with TabbedContent(id="exp-tabs", initial="plot"):
            with TabPane("1 Runs", id="runs"):
                yield DataTable(id="exp-table", cursor_type="row", zebra_stripes=True)
            with TabPane("2 Curves", id="curves"):
                yield LossChart("val loss by run (lower is better)", legend=False, id="exp-curves")
                yield Static(id="exp-curves-legend")
            with TabPane("3 Plot", id="plot"):
                yield ExperimentPlot(id="exp-plot")
        yield Footer()

    def on_mount(self) -> None:
        try:
            self.experiment = folder.load_experiment(self.exp_dir)
        except ConfigError as e:
            self.error = str(e)
            self.query_one("#exp-summary", Static).update(f"[red]{markup_escape(str(e))}[/red]")
            return
        self.sub_title = f"Experiment {self.experiment.name}"
        self._columns: list[str] = []
        self.poll()
        self.set_interval(POLL_S, self.poll)

    # -- following ------------------------------------------------------------------------------
    def poll(self) -> None:
        if self.experiment is None:
            return
        before = self.results.state if self.results is not None else None
        try:
            self.results = results.collect(self.experiment, self.curves)
        except Exception as e:
            self.query_one("#exp-summary", Static).update(f"[red]cannot read the experiment: {markup_escape(str(e))}[/red]")
            return
        self._show_summary()
        self._fill_table()
        self._draw_curves()
        self.query_one(ExperimentPlot).show(plots.plot_data(self.results))
        if self.results.state != before:
            self.refresh_bindings()

    def _show_summary(self) -> None:
        res = self.results
        spec = self.experiment.spec
        colour = STATE_STYLE.get(res.state, "yellow" if res.state in ("starting", "finishing") else "")
        state = f"[{colour}]{res.state}[/{colour}]" if colour else res.state
        active = [r.name for r in res.runs if r.status in ("running", "starting")]
        line = (f"[b]{markup_escape(self.experiment.name)}[/b] · {markup_escape(spec.title or spec.kind)} · {state} · "
                f"{len(res.finished)}/{len(res.runs)} finished · {markup_escape(spec.budget.describe())}")
        if active:
            line += f"\n[dim]training {markup_escape(', '.join(active))}[/dim]"
        elif res.state in ("interrupted", "paused", "stopped", "not started"):
            tail = folder.log_tail(self.exp_dir, 1) if res.state in ("interrupted", "not started") else []
            why = f"scheduler: {markup_escape(tail[-1][:60])} · " if tail else ""
            line += f"\n[dim]{why}r resumes: unfinished runs continue from their last checkpoint[/dim]"
        self.query_one("#exp-summary", Static).update(line)

    def _fill_table(self) -> None:
        table = self.query_one("#exp-table", DataTable)
        header = results.table_header(self.results)
        if header != self._columns:
            table.clear(columns=True)
            table.add_columns(*header)
            self._columns = header
        keep = table.cursor_row
        table.clear()
        for run, row in zip(self.results.runs, results.table_rows(self.results)):
            table.add_row(*row, key=run.name)
        if self.results.runs:
            table.move_cursor(row=min(keep, len(self.results.runs) - 1))

    def _draw_curves(self) -> None:
        """The runs' val curves, and under the chart a legend that wraps (the title line holds one
        or two runs at 80 columns, not five): each run by its axis values."""
        chart = self.query_one("#exp-curves", LossChart)
        legend = []
        for i, run in enumerate(self.experiment.runs):
            curve = self.curves.get(run.name)
            if curve is None:
                continue
            label = " ".join(f"{a}={value_text(v)}" for a, v in run.values.items()) or run.name
            marker = MARKERS[i % len(MARKERS)]
            series = chart.series.get(run.name)
            if series is None or series.xs is not curve.val_steps:
                chart.set_series(run.name, curve.val_steps, curve.val_loss, label=label, marker=marker)
            if curve.val_steps:
                legend.append(f"{marker} {markup_escape(label)}")
        self.query_one("#exp-curves-legend", Static).update(
            "   ".join(legend) if legend else "[dim]no evaluation yet[/dim]")
        chart.touch()

    # -- actions --------------------------------------------------------------------------------
    def check_action(self, action: str, parameters) -> bool | None:
        if self.results is None:
            return action in ("back", "tab")
        state = self.results.state
        if action == "pause":
            return state in ("running", "starting")
        if action == "resume":
            return state in ("paused", "stopped", "interrupted", "not started")
        if action == "stop":
            return state in ("running", "starting", "paused", "interrupted")
        return True

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def selected_run(self) -> Path | None:
        table = self.query_one("#exp-table", DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.exp_dir / key if key else None

    def action_watch(self) -> None:
        run_dir = self.selected_run()
        if run_dir is None or not run_dir.exists():
            self.notify("That run has not started yet", severity="warning")
            return
        navigation.open_screen(self.app, "training", run_dir=run_dir)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_watch()

    def action_pause(self) -> None:
        self.notify(sweep_runner.request(self.exp_dir, "pause"))
        self.poll()

    @background(thread=False, group="experiment-resume", what="Resuming the experiment")
    async def action_resume(self) -> None:
        if serving_policy.is_served():
            self.notify("Sweeps are resumed with `minigpt sweep --resume` on the server, not from a browser session",
                        severity="warning")
            return
        pid = await sweep_runner.start(self.exp_dir)
        self.notify("Resuming: unfinished runs continue from their checkpoints" if pid else
                    "The scheduler is already running")
        self.poll()

    def action_stop(self) -> None:
        def done(yes: bool | None) -> None:
            if yes:
                self.notify(sweep_runner.request(self.exp_dir, "stop"))
                self.poll()

        self.app.push_screen(ConfirmScreen(f"Stop experiment [b]{markup_escape(self.exp_dir.name)}[/b]? Its runs stop "
                                           f"with a checkpoint; r resumes them later."), done)

    def action_export(self) -> None:
        try:
            written = exports.write_exports(self.experiment)
        except OSError as e:
            self.notify(f"Export failed: {e}", severity="error")
            return
        self.notify("Exported " + ", ".join(p.name for p in written) + f" to {self.exp_dir}", timeout=6)

    def action_back(self) -> None:
        self.app.pop_screen()
