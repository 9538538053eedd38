"""Compare runs: loss curves overlaid, and the bigram / MLP / GPT table from the learner's runs.

The course's chapter 9 comparison, made from runs the learner trained: which model reaches the
lowest validation loss, and with how many parameters. Space adds or removes a run's curve; like
TensorBoard, the chart can show train or val loss (m), smooth it (s) and use a log axis (l). The
legend sits beside the chart and every row names the settings that tell runs apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from minigpt.experiments import groups as seed_groups
from minigpt.runs import listing
from minigpt.runs.metrics import RunMetrics
from minigpt.text import markup_escape as escape
from minigpt.text import printable
from tui.common.header import TutorHeader
from tui.common.loss_chart import LossChart
from tui.training.run_summary import (
    budget_cell,
    loss_cell,
    lr_cell,
    model_cell,
    params_cell,
    read_config,
    run_note,
    run_title,
    seed_cell,
    settings_line,
    state_glyph,
    state_name,
)
from tui.workers import Result, background

# Distinct markers so curves stay apart without colour (NO_COLOR, ansi themes); the colours (plotext
# name, the same colour for the legend's marker) are a second cue.
MARKERS = ("●", "x", "+", "■", "◆", "o", "*", "#")
COLOURS = (("magenta+", "ansi_bright_magenta"), ("green+", "ansi_bright_green"), ("red+", "ansi_bright_red"),
           ("cyan+", "ansi_bright_cyan"), ("yellow+", "ansi_bright_yellow"), ("blue+", "ansi_bright_blue"),
           ("white", "ansi_white"), ("magenta", "ansi_magenta"))
MAX_CURVES = len(MARKERS)
SMOOTHING = (0.0, 0.6, 0.8, 0.9, 0.95)  # s cycles through TensorBoard's usual weights
METRICS = {"val": "val loss", "train": "train loss"}
MODEL_ORDER = {"bigram": 0, "mlp": 1, "gpt": 2}


def hidden_under(path: str, drawn: dict[str, tuple[list, list]], chart) -> str | None:
    """The run drawn after ``path`` whose curve covers it: at every step they share, the two
    values are within one text row of the chart, so only the later one shows."""
    steps, values = drawn.get(path, ([], []))
    if len(steps) < 2:
        return None
    all_ys = [y for _, ys in drawn.values() for y in ys]
    row = (max(all_ys) - min(all_ys)) / max(chart.size.height - 4, 4) if all_ys else 0
    row /= 2  # half a row: closer than that, both round to the same row
    later = list(drawn)[list(drawn).index(path) + 1:]
    for other in later:
        theirs = dict(zip(*drawn[other]))
        shared = [(y, theirs[x]) for x, y in zip(steps, values) if x in theirs]
        if len(shared) >= max(2, len(steps) // 2) and all(abs(a - b) <= row for a, b in shared):
            return other
    return None


def unique_labels(labels: list[str], width: int = 27) -> list[str]:
    """``labels`` cut to ``width``, kept apart: a name cut short keeps its end ("gpt ×3 (…141805)"),
    and names that still read the same are numbered (#2, #3)."""
    out = []
    for label in labels:
        if len(label) > width:
            tail = label[label.rfind("("):] if "(" in label else ""
            keep = max(width - len(tail) - 1, width // 2) if 0 < len(tail) < width else width - 1
            label = label[:keep] + "…" + (tail[-(width - keep - 1):] if tail else "")
        out.append(label[:width])
    seen: dict[str, int] = {}
    for i, label in enumerate(out):
        seen[label] = seen.get(label, 0) + 1
        if out.count(label) > 1 and seen[label] > 1:
            suffix = f" #{seen[label]}"
            out[i] = label[: width - len(suffix)] + suffix
    return out


def curve_label(info: listing.RunInfo, width: int = 27) -> tuple[str, str]:
    """A run in the legend: its name in full (``unique_labels`` cuts the names apart), then its key
    settings."""
    cfg = read_config(info.path)
    lr = lr_cell(cfg)
    settings = f"{model_cell(info, cfg)}{f' lr {lr}' if lr != '–' else ''} seed {seed_cell(cfg)}"
    title = run_title(info)
    return title, settings[:width]


class CompareRunsScreen(Screen):
    BINDINGS = [
        Binding("space", "toggle", "Show", show=True, id="compare_runs.toggle"),
        Binding("m", "metric", "Metric", show=True, id="compare_runs.metric"),
        Binding("s", "smooth", "Smooth", show=True, id="compare_runs.smooth"),
        Binding("l", "log_axis", "Log", show=True, id="compare_runs.log_axis"),
        Binding("g", "groups", "Groups", show=True, id="compare_runs.groups"),
        Binding("escape", "back", "Back", show=True, id="compare_runs.back"),
    ]

    def __init__(self, groups: bool = False, run: Path | str | None = None):
        """``run``: a run folder whose curve is drawn first (a lab job's kept run)."""
        super().__init__()
        self.open_on_groups = groups  # the palette's "Seed groups": open with g already pressed
        self.first_run = str(run) if run is not None else None
        self.shown: list[str] = []  # run paths whose curve is drawn, in the order they were shown
        self.slots: dict[str, int] = {}  # run path → its marker and colour, kept while it is shown
        self.infos: list[listing.RunInfo] = []
        self.metric = "val"
        self.smoothing = 0.0
        self.log_axis = False
        self.curves: dict[str, RunMetrics] = {}  # read in a worker, drawn from here
        self.group_mode = False  # g: seed groups drawn as bands instead of single runs
        self.groups: list[seed_groups.SeedGroup] = []
        self.bands: dict[str, seed_groups.Band] = {}
        self.finals: dict[str, seed_groups.Finals] = {}  # each group's final val and test: mean ± se, N
        self.comparison: str | None = None  # the first two groups compared, in words
        self._loading_bands = False

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with Horizontal(id="compare-top"):
            yield LossChart("val loss (lower is better)", legend=False, id="compare-chart")
            yield Static(id="compare-legend")
        yield Static(id="compare-options")
        yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="compare-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Compare runs"
        from minigpt.runs.lab import lab_runs

        found = listing.list_runs() + [listing.read_run(path) for _, path in lab_runs()]  # a lab job's kept run too
        self.infos = sorted(found, key=lambda i: (MODEL_ORDER.get((i.model or "").lower(), 3),
                                                  i.best_val if i.best_val is not None else 1e9))
        # Start with the best run of each kind, then others, as long as they have val points.
        with_val = [i for i in self.infos if i.best_val is not None]
        best_per_kind: dict[str, listing.RunInfo] = {}
        for i in with_val:
            best_per_kind.setdefault(i.model or "?", i)
        ordered = list(best_per_kind.values()) + [i for i in with_val if i not in best_per_kind.values()]
        self.shown = [str(i.path) for i in ordered[:4]]
        if self.first_run in {str(i.path) for i in self.infos}:
            self.shown = [self.first_run] + [p for p in self.shown if p != self.first_run][:3]
        self.slots = {path: i for i, path in enumerate(self.shown)}
        table = self.query_one(DataTable)
        table.add_columns("", "model", "run", "lr", "steps", "seed", "best val", "test")
        self._fill_table()
        self._show_options()
        table.focus()
        if not self.infos:
            self.query_one("#compare-legend", Static).update(
                "No runs yet. Train a bigram, an MLP and a GPT (Training → n) to compare them here.")
        self.load_curves(list(self.shown))
        if self.open_on_groups:
            self.action_groups()

    # -- data -------------------------------------------------------------------------------------
    @dataclass
    class CurvesRead(Result):
        curves: dict[str, RunMetrics]

    @dataclass
    class BandsRead(Result):
        groups: list
        bands: dict
        comparison: str | None
        finals: dict

    # Not exclusive: each call reads other runs' curves and adds them, so none supersedes another.
    @background(thread=True, exclusive=False, group="curves")
    def load_curves(self, paths: list[str]) -> CurvesRead:
        """Read the metrics files off the event loop (a long run's file is megabytes)."""
        loaded = {}
        for path in paths:
            series = self.curves.get(path) or RunMetrics(Path(path))
            series.poll()
            loaded[path] = series
        return self.CurvesRead(loaded)

    @on(CurvesRead)
    def _curves_loaded(self, message: CurvesRead) -> None:
        self.curves.update(message.curves)
        self._draw()

    def _info(self, path: str) -> listing.RunInfo | None:
        return next((i for i in self.infos if str(i.path) == path), None)

    # -- drawing ----------------------------------------------------------------------------------
    def _marker(self, path: str) -> str:
        return MARKERS[self.slots[path]] if path in self.slots else " "

    def _fill_table(self) -> None:
        table = self.query_one(DataTable)
        keep = table.cursor_row
        table.clear()
        for info in self.infos:
            cfg = read_config(info.path)
            title = run_title(info)
            cells = (self._marker(str(info.path)), model_cell(info, cfg),
                     title if len(title) <= 16 else title[:15] + "…", lr_cell(cfg), budget_cell(info, cfg),
                     seed_cell(cfg), loss_cell(info.best_val), loss_cell(info.test_loss))
            table.add_row(*(Text(printable(c)) for c in cells), key=str(info.path))
        if self.infos:
            table.move_cursor(row=min(keep, len(self.infos) - 1))
        self._show_detail()

    def _show_detail(self) -> None:
        table = self.query_one(DataTable)
        if not self.infos:
            self.query_one("#compare-detail", Static).update("")
            return
        info = self.infos[min(max(table.cursor_row, 0), len(self.infos) - 1)]
        note = run_note(info)
        self.query_one("#compare-detail", Static).update(
            f"[b]{escape(run_title(info))}[/b]  {state_glyph(info)} {state_name(info)} · "
            f"{params_cell(info.n_params)} params · test {loss_cell(info.test_loss)}\n"
            f"{escape(settings_line(info, read_config(info.path)))}" + (f"\n[i]{escape(note)}[/i]" if note else ""))

    def _show_options(self) -> None:
        smooth = f"{self.smoothing:g}" if self.smoothing else "off"
        self.query_one("#compare-options", Static).update(
            f"[b]{METRICS[self.metric]}[/b] (m) · smoothing [b]{smooth}[/b] (s) · "
            f"log axis [b]{'on' if self.log_axis else 'off'}[/b] (l) · space shows/hides a run")

    @background(thread=True, exclusive=True, group="bands")
    def load_bands(self) -> BandsRead:
        """Every group's val band, and the first two groups compared (off the event loop)."""
        found = seed_groups.find_groups(self.infos)[:MAX_CURVES]
        bands = {g.name: seed_groups.group_band(g) for g in found}
        finals = {g.name: seed_groups.finals(g) for g in found}
        text = None
        if len(found) >= 2:
            a, b = found[0], found[1]
            result = seed_groups.compare(a, b, bands[a.name], bands[b.name])
            text = ("\n".join(seed_groups.brief(result, "1st", "2nd")) if result is not None
                    else "the first two groups need two runs each at a shared evaluation to be compared")
        return self.BandsRead(found, bands, text, finals)

    @on(BandsRead)
    def _bands_loaded(self, message: BandsRead) -> None:
        self.groups, self.bands, self.comparison = message.groups, message.bands, message.comparison
        self.finals = message.finals
        self._loading_bands = False
        self._draw()

    def _draw_groups(self, chart: LossChart) -> None:
        """Each group as its mean val curve between two dotted lines at mean ± one sd; a time
        budget group over the fraction of its budget."""
        legend = []
        names = unique_labels([printable(g.name) for g in self.groups])
        for i, group in enumerate(self.groups):
            band = self.bands.get(group.name)
            colour = COLOURS[i][0]
            legend.append(f"[{COLOURS[i][1]}]{MARKERS[i]}[/] {escape(names[i][:22])} [dim]N {len(group.runs)}[/dim]")
            final = self.finals.get(group.name)
            for split, summary in (("val", final.val), ("test", final.test)) if final is not None else ():
                if summary is not None:  # final losses, mean ± standard error
                    legend.append(f"  [dim]{split} {summary.describe(n=summary.n != len(group.runs))}[/dim]")
            if band is None or not band.steps:
                continue
            chart.set_series(f"{group.name}:mean", band.steps, band.mean, label=printable(group.name),
                             marker=MARKERS[i], color=colour)
            chart.set_series(f"{group.name}:low", band.steps, band.low, label="", marker="·", scatter=True,
                             color=colour)
            chart.set_series(f"{group.name}:high", band.steps, band.high, label="", marker="·", scatter=True,
                             color=colour)
        if self.comparison:
            legend.append("\n" + "\n".join(escape(printable(line)) for line in self.comparison.splitlines()))
        if self._loading_bands:
            legend = ["Reading the seed groups…"]
        elif not self.groups:
            legend = ["No seed groups yet: minigpt train --seeds 3 trains one (g: back to runs)."]
        self.query_one("#compare-legend", Static).update("\n".join(legend))

    def _draw(self) -> None:
        chart = self.query_one(LossChart)
        if self.group_mode:
            budget = any(b.axis == "budget" for b in self.bands.values())
            chart.chart_title = "val loss of seed groups, mean ± sd"
            chart.xlabel = "fraction of the time budget" if budget else "step"
            chart.smoothing, chart.log_y = 0.0, self.log_axis
            chart.clear_series()
            self._draw_groups(chart)
            return
        chart.chart_title = f"{METRICS[self.metric]} (lower is better)"
        chart.xlabel = "step"
        chart.smoothing = self.smoothing
        chart.log_y = self.log_axis
        chart.clear_series()
        legend = []
        drawn = {}
        order = sorted(self.shown, key=lambda p: self.slots[p])  # drawn in marker order
        labels = {}
        for path in order:
            info = self._info(path)
            labels[path] = curve_label(info) if info is not None else (Path(path).name, "")
        titles = [labels[p][0] for p in order]
        for path in order:  # runs named alike: their folders tell them apart
            if titles.count(labels[path][0]) > 1:
                labels[path] = (f"{labels[path][0]} ({Path(path).name})", labels[path][1])
        apart = unique_labels([labels[p][0] for p in order])
        labels = {p: (name, labels[p][1]) for p, name in zip(order, apart, strict=True)}
        for path in order:
            series = self.curves.get(path)
            if series is not None:
                steps, values = ((series.val_steps, series.val_loss) if self.metric == "val"
                                 else (series.steps, series.train_loss))
                drawn[path] = (steps, values)
                i = self.slots[path]
                chart.set_series(path, steps, values, label=printable(labels[path][0]), marker=MARKERS[i],
                                 scatter=len(steps) < 30, color=COLOURS[i][0])
        for path in order:
            i = self.slots[path]
            label, settings = labels[path]
            legend.append(f"[{COLOURS[i][1]}]{MARKERS[i]}[/] {escape(label)}")
            under = hidden_under(path, drawn, chart)
            if under is not None:  # drawn over: the legend says where it is
                legend.append(f"  [dim]hidden under {MARKERS[self.slots[under]]}: the same row[/dim]")
            elif len(self.shown) <= 5:  # room for a second line each: the settings
                legend.append(f"  [dim]{escape(settings)}[/dim]")
        if legend:
            self.query_one("#compare-legend", Static).update("\n".join(legend))
        elif self.infos:
            self.query_one("#compare-legend", Static).update("No curve shown: space adds the highlighted run.")

    # -- actions ----------------------------------------------------------------------------------
    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def action_toggle(self) -> None:
        table = self.query_one(DataTable)
        if not self.infos:
            return
        path = str(self.infos[table.cursor_row].path)
        if path in self.shown:
            self.shown.remove(path)
            del self.slots[path]  # its marker is free again; the others keep theirs
        elif len(self.shown) >= MAX_CURVES:
            self.notify(f"At most {MAX_CURVES} curves: hide one first", severity="warning")
            return
        else:
            self.shown.append(path)
            self.slots[path] = min(set(range(MAX_CURVES)) - set(self.slots.values()))
        self._fill_table()
        self._draw()
        if path in self.shown and path not in self.curves:
            self.load_curves([path])

    def action_metric(self) -> None:
        self.metric = "train" if self.metric == "val" else "val"
        self._show_options()
        self._draw()

    def action_smooth(self) -> None:
        self.smoothing = SMOOTHING[(SMOOTHING.index(self.smoothing) + 1) % len(SMOOTHING)]
        self._show_options()
        self._draw()

    def action_log_axis(self) -> None:
        self.log_axis = not self.log_axis
        self._show_options()
        self._draw()

    def action_groups(self) -> None:
        """Seed groups as bands (and the first two compared), or single runs again."""
        self.group_mode = not self.group_mode
        if self.group_mode:
            self._loading_bands = True
            self.load_bands()
        self._draw()

    def action_back(self) -> None:
        self.app.pop_screen()

    def palette_commands(self):
        yield "Compare: show/hide the highlighted run", "Overlay its loss curve", self.action_toggle
        yield "Compare: train or val loss", "Switch the metric the chart shows", self.action_metric
        yield "Compare: smoothing", "Cycle the moving-average weight (0, 0.6 … 0.95)", self.action_smooth
        yield "Compare: log axis", "A logarithmic loss axis on or off", self.action_log_axis
        yield "Compare: seed groups", "Groups of seeds as bands, the first two compared by a t-test", self.action_groups
