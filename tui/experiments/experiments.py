"""The experiments lab: the course's exercises as presets, a custom grid, and the experiments so far.

Starting one writes its folder and starts its scheduler in the background
(minigpt.experiments.sweep_runner); the sweep then outlives the app, and its screen (opened here,
from the table, or by ``minigpt watch NAME``) follows it from its folder.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from minigpt import serving_policy
from minigpt.errors import ConfigError, DatasetError
from minigpt.experiments import folder, plots, presets, results, sweep_runner
from minigpt.experiments.spec import Budget, data_format_of, plan_runs, spec_data_info, value_text
from minigpt.text import markup_escape
from tui import navigation
from tui.common.confirm import StartSweepScreen
from tui.common.header import TutorHeader
from tui.workers import background

TEMPERATURE = "temperature"  # not a sweep of runs: the playground's sweep of one model
CUSTOM_HINT = "d_model=16,32 steps=500"  # fits the field at 80 columns; the plan explains more
CUSTOM_HELP = ("[b]Custom grid[/b]\nType axes as name=value,value and a budget, e.g.\n"
               "  d_model=16,32 dropout=0,0.1 steps=500\nThe runs appear here as you type; enter asks before it starts.")
# A sweep trains run after run in the background, outside the served sessions' limit on runs.
SERVED_REFUSAL = ("Sweeps are not started from a browser session: they train many runs in the background. "
                  "Run `minigpt sweep` on the server; this lab shows its results.")


class ExperimentsScreen(Screen):
    PALETTE_PREFIX = "Experiments"
    BINDINGS = [
        Binding("enter", "start", "Start / open", show=True, id="experiments.start"),
        Binding("c", "custom", "Custom grid", show=True, id="experiments.custom"),
        Binding("tab", "focus_next", "Next list", show=False, id="experiments.focus_next"),
        Binding("escape", "back", "Back", show=True, id="experiments.back"),
    ] + [Binding(str(i + 1), f"pick({i})", show=False, id=f"experiments.pick_{i + 1}") for i in range(9)]

    def __init__(self, preset: str | None = None, presets_first: list[str] | None = None):
        """``presets_first``: the presets a lesson names, listed first; ``preset`` is highlighted."""
        super().__init__()
        first = [p for p in (presets_first or []) if p in presets.PRESETS]
        self.order = first + [p for p in presets.preset_names() if p not in first] + [TEMPERATURE]
        self.initial = preset if preset in self.order else (first[0] if first else None)
        self._names: list[str] | None = None  # the embedded names, read once for the plans
        self._starting = False  # a question or a start under way: a second enter starts nothing
        self._curves: dict[str, dict] = {}  # per experiment: its runs' metrics, read incrementally

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with Horizontal(id="lab-top"):
            with Vertical(id="lab-left"):
                yield OptionList(*[Option(self._label(i, key), id=key) for i, key in enumerate(self.order)],
                                 id="lab-presets")
                yield Input(placeholder=CUSTOM_HINT, id="lab-custom")
            yield Static(id="lab-plan")
        yield Static("[b]Your experiments[/b] [dim](enter opens one)[/dim]", id="lab-table-title")
        yield DataTable(id="lab-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    @staticmethod
    def _label(i: int, key: str) -> str:
        title = "Temperature (playground)" if key == TEMPERATURE else presets.PRESETS[key]["title"]
        return f"[b]{i + 1}[/b]  {title}" if i < 9 else f"   {title}"

    def on_mount(self) -> None:
        self.sub_title = "Experiments lab"
        table = self.query_one("#lab-table", DataTable)
        table.add_columns("state", "experiment", "runs", "best val", "result")
        options = self.query_one("#lab-presets", OptionList)
        options.highlighted = self.order.index(self.initial) if self.initial else 0
        options.focus()
        self.refresh_experiments()
        self.set_interval(2.0, self.refresh_experiments)

    # -- the plan of the highlighted preset -----------------------------------------------------
    def data_info(self, spec):
        """The plan's facts for ``spec``'s data format: the embedded names' read once, generated
        rows' and a text's (the embedded names as one text) as the spec asks."""
        if data_format_of(spec) != "lines":
            return spec_data_info(spec)
        if self._names is None:
            from minigpt.data import load_words

            self._names = list(load_words())
        return spec_data_info(spec, words=self._names)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.show_plan(event.option.id)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "lab-custom":
            self.show_custom_plan(event.value)

    def on_descendant_focus(self, event) -> None:
        """The plan follows the pane: the typed grid while the field has the focus."""
        if isinstance(event.widget, Input):
            self.show_custom_plan(event.widget.value)
        elif isinstance(event.widget, OptionList) and event.widget.highlighted is not None:
            self.show_plan(self.order[event.widget.highlighted])

    def custom_spec(self, text: str):
        grid = presets.parse_grid_text(text)
        budget = grid.budget or Budget("steps", 1000)
        return presets.custom_spec("custom", grid.axes, budget, grid.base)

    def show_custom_plan(self, text: str) -> None:
        plan = self.query_one("#lab-plan", Static)
        if not text.strip():
            plan.update(CUSTOM_HELP)
            return
        try:
            spec = self.custom_spec(text)
        except ConfigError as e:
            plan.update(f"[b]Custom grid[/b]\n[red]{markup_escape(str(e))}[/red]")
            return
        self.show_spec(spec)

    def show_plan(self, key: str) -> None:
        plan = self.query_one("#lab-plan", Static)
        if key == TEMPERATURE:
            plan.update("[b]Temperature[/b] (exercise 3)\nOne trained model sampled at T = 0.5 … 1.5 side by "
                        "side: no training needed. Enter opens the playground; its [b]w[/b] key runs the sweep.")
            return
        self.show_spec(presets.preset_spec(key))

    def show_spec(self, spec) -> None:
        plan = self.query_one("#lab-plan", Static)
        try:
            runs = plan_runs(spec, self.data_info(spec))
        except (ConfigError, DatasetError) as e:
            plan.update(f"[red]{markup_escape(str(e))}[/red]")
            return
        lines = [f"[b]{markup_escape(spec.title)}[/b]", markup_escape(spec.description), "",
                 f"{len(runs)} runs · {markup_escape(spec.budget.describe())}"]
        for r in runs[:6]:
            point = " ".join(f"{a}={value_text(v)}" for a, v in r.values.items())
            steps = f"  {r.steps:>6,} steps" if spec.budget.kind == "compute" else ""
            lines.append(f" {markup_escape(point):<16} N {r.n_params:>9,}{steps}")
        if len(runs) > 6:
            lines.append(f" … and {len(runs) - 6} more")
        lines.append("[dim]started on the server: `minigpt sweep` (not from a browser)[/dim]"
                     if serving_policy.is_served() else "[dim]enter asks first, with a measured estimate[/dim]")
        plan.update("\n".join(lines))

    # -- experiments so far ---------------------------------------------------------------------
    def refresh_experiments(self) -> None:
        table = self.query_one("#lab-table", DataTable)
        keep = table.cursor_row
        table.clear()
        for exp_dir in folder.list_experiments():
            try:
                res = results.collect(exp_dir, self._curves.setdefault(str(exp_dir), {}))
            except ConfigError:
                continue
            vals = [r.val_loss for r in res.finished if r.val_loss is not None]
            fit = plots.plot_data(res).numbers.get("fit")
            outcome = f"α = {fit['alpha']:.3f}" if fit else res.experiment.spec.title
            table.add_row(res.state, exp_dir.name, f"{len(res.finished)}/{len(res.runs)}",
                          f"{min(vals):.4f}" if vals else "–", outcome, key=str(exp_dir))
        if table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1))

    # -- actions --------------------------------------------------------------------------------
    def action_pick(self, index: int) -> None:
        if index < len(self.order):
            options = self.query_one("#lab-presets", OptionList)
            options.highlighted = index
            options.focus()

    def action_custom(self) -> None:
        self.query_one("#lab-custom", Input).focus()

    async def action_start(self) -> None:
        focused = self.focused
        if isinstance(focused, DataTable):
            self.open_selected()
        elif isinstance(focused, Input):
            await self.start_custom(focused.value)
        else:
            options = self.query_one("#lab-presets", OptionList)
            if options.highlighted is not None:
                await self.start_preset(self.order[options.highlighted])

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        await self.start_preset(event.option.id)

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        await self.start_custom(event.value)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.open_selected()

    def open_selected(self) -> None:
        table = self.query_one("#lab-table", DataTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            navigation.open_screen(self.app, "experiment", key)

    async def start_preset(self, key: str) -> None:
        if key == TEMPERATURE:
            self.app.open_area("playground")
            self.notify("Temperature sweep: press w in the playground")
            return
        self.ask_to_start(presets.preset_spec(key))

    async def start_custom(self, text: str) -> None:
        try:
            spec = self.custom_spec(text)
        except ConfigError as e:
            self.notify(markup_escape(e), severity="error", title="Custom grid")
            return
        self.ask_to_start(spec)

    def ask_to_start(self, spec) -> None:
        """The training form's question, for a whole sweep: what starts, its sizes, the measured time."""
        if self._starting:
            return  # a second enter while asked, or while the first start is under way
        if serving_policy.is_served():
            self.notify(SERVED_REFUSAL, severity="warning", title="Not started")
            return
        try:
            planned = plan_runs(spec, self.data_info(spec))
        except (ConfigError, DatasetError) as e:
            self.notify(markup_escape(e), severity="error", title="Not started")
            return
        from minigpt.training.options import TrainConfig

        configs = [TrainConfig.from_dict(r.config) for r in planned]
        self._starting = True

        def answered(start: bool | None) -> None:
            if start:
                self.launch(spec)
            else:
                self._starting = False

        self.app.push_screen(StartSweepScreen(spec.title or spec.name, spec.budget.describe(), configs,
                                              [r.n_params for r in planned]), answered)

    @background(thread=False, group="experiment-start", what="Starting the experiment")
    async def launch(self, spec) -> None:
        try:
            exp = folder.create_experiment(spec)
            await sweep_runner.start(exp.dir)
        except (ConfigError, DatasetError, OSError) as e:
            self.notify(markup_escape(e), severity="error", title="Not started")
            return
        finally:
            self._starting = False
        self.notify(f"{markup_escape(exp.name)}: a sweep of {len(exp.runs)} runs is starting in the background")
        self.refresh_experiments()
        navigation.open_screen(self.app, "experiment", exp.dir)

    def action_back(self) -> None:
        self.app.pop_screen()
