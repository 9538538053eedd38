"""Runs: every training run with its status, whoever started it; open, stop, resume, delete, copy.

The status comes from minigpt.runs.listing (a "running" run whose process is gone shows as failed), and
the table refreshes every second so runs started elsewhere appear by themselves.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from minigpt import paths, serving_policy
from minigpt.control import run_processes
from minigpt.errors import ConfigError, PolicyRefusal, RunControlError
from minigpt.runs import listing
from minigpt.runs.schema import RunState
from minigpt.text import markup_escape as escape
from minigpt.text import printable
from tui import navigation
from tui.common.confirm import ConfirmScreen
from tui.common.header import TutorHeader
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

# Fits 80 columns: the state as a glyph (legend above the table), the settings that tell runs apart.
COLUMNS = ("", "run", "model", "lr", "steps", "seed", "grp", "best val", "age")  # the size is in the detail line
RUN_WIDTH = 17  # at 80 columns; a wider terminal gives the names its extra columns
OTHER_COLUMNS = 63  # what the other columns take, with the table's padding and scrollbar


def group_tags(infos: list[listing.RunInfo]) -> dict[str, str]:
    """A short tag per seed group (g1, g2, … in the order listed): the full name is long
    ("gpt ×3 (20261203-…)") and shows in the detail line."""
    tags: dict[str, str] = {}
    for info in infos:
        if info.group and info.group not in tags:
            tags[info.group] = f"g{len(tags) + 1}"
    return tags


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def row_for(info: listing.RunInfo, stopping: bool = False, name_width: int = RUN_WIDTH,
            group_tag: str = "–") -> tuple[str, ...]:
    cfg = read_config(info.path)
    return ("■…" if stopping else state_glyph(info), _short(run_title(info), name_width), model_cell(info, cfg),
            lr_cell(cfg), budget_cell(info, cfg), seed_cell(cfg), group_tag, loss_cell(info.best_val),
            _age(info.age))


def detail_for(info: listing.RunInfo, stopping: bool = False, group_tag: str | None = None) -> str:
    """The highlighted run in full: name, state, every key setting, its note."""
    cfg = read_config(info.path)
    title = run_title(info)
    folder = f"  [dim]({escape(info.name)})[/dim]" if title != info.name else ""
    state = ("■ stopping… (finishing its step, saving a checkpoint)" if stopping
             else f"{state_glyph(info)} {state_name(info)}") + (f" · {escape(info.device)}" if info.device else "")
    state += f" · {params_cell(info.n_params)} params" if info.n_params else ""
    lines = [f"[b]{escape(title)}[/b]{folder}  {state}",
             escape(settings_line(info, cfg))]
    if info.group:
        lines.append(f"seed group{' ' + group_tag if group_tag else ''}: {escape(printable(info.group))}")
    if info.reason and info.status in (RunState.BROKEN, RunState.FAILED):
        lines.append(f"{info.status}: {escape(info.reason)}")  # why: a damaged file, a divergence, a crash
    note = run_note(info)
    if note:
        lines.append(f"[i]{escape(note)}[/i]")
    return "\n".join(lines)


class RunsScreen(Screen):
    BINDINGS = [
        # priority: the table's own enter (select, hidden) would otherwise hide this one in the footer
        Binding("enter", "open", "Watch", show=True, priority=True, id="runs.open"),
        Binding("s", "stop", "Stop", show=True, id="runs.stop"),
        Binding("r", "resume", "Resume", show=True, id="runs.resume"),
        Binding("n", "new_run", "New", show=True, id="runs.new_run"),
        Binding("v", "compare", "Compare", show=True, id="runs.compare"),
        Binding("c", "duplicate", "Copy settings", show=False, id="runs.duplicate"),
        Binding("d", "delete", "Delete", show=False, id="runs.delete"),
        Binding("escape", "back", "Back", show=True, id="runs.back"),
    ]

    def __init__(self):
        super().__init__()
        self.infos: dict[str, listing.RunInfo] = {}
        self.tags: dict[str, str] = {}  # seed group → its short tag in the grp column
        self.stopping: set[str] = set()  # runs asked to stop whose worker has not confirmed yet
        self._fast = None  # the quick refresh while a stop is pending

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        yield Static(id="runs-summary")
        yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="runs-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Training runs"
        table = self.query_one(DataTable)
        table.add_columns(*COLUMNS)
        self.refresh_runs()
        table.focus()
        self.set_interval(1.0, self.refresh_runs)

    def refresh_runs(self) -> None:
        table = self.query_one(DataTable)
        keep = self.selected_path()
        found = listing.list_runs()
        self.infos = {str(i.path): i for i in found}
        self.stopping &= {p for p, i in self.infos.items() if i.status.active}
        if not self.stopping and self._fast is not None:
            self._fast.stop()
            self._fast = None
        name_width = max(RUN_WIDTH, self.size.width - OTHER_COLUMNS)
        self.tags = group_tags(found)
        rows = [(str(info.path), row_for(info, str(info.path) in self.stopping, name_width,
                                         self.tags.get(info.group, "–"))) for info in found]
        if rows != getattr(self, "_shown_rows", None):  # redraw only what changed: no flicker
            self._shown_rows = rows
            table.clear()
            for key, row in rows:
                table.add_row(*(Text(printable(cell)) for cell in row), key=key)
            if keep is not None and str(keep) in self.infos:
                table.move_cursor(row=table.get_row_index(str(keep)))
        summary = self.query_one("#runs-summary", Static)
        if found:
            summary.update(f"{len(found)} run{'s' * (len(found) != 1)} in {escape(str(paths.runs_dir()))}\n"
                           "[dim]▶ running  ✓ finished  ■ stopped  ✗ failed  ! broken · model: width×layers[/dim]")
        else:
            summary.update("No runs yet: press [b]n[/b] to configure one, or run [b]minigpt train[/b] in a terminal.")
        self._show_detail()
        self.refresh_bindings()

    def on_resize(self) -> None:
        self.refresh_runs()  # the names take the width there is

    def _show_detail(self) -> None:
        path = self.selected_path()
        info = self.infos.get(str(path)) if path is not None else None
        self.query_one("#runs-detail", Static).update(
            detail_for(info, str(path) in self.stopping, self.tags.get(info.group)) if info is not None else "")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()
        self.refresh_bindings()

    def check_action(self, action: str, parameters) -> bool | None:
        """Stop, resume, delete and copy only where they can do something for the highlighted run."""
        if action not in ("stop", "resume", "delete", "duplicate", "open"):
            return True
        path = self.selected_path() if self.is_mounted else None
        info = self.infos.get(str(path)) if path is not None else None
        if info is None:
            return False
        if action == "open":
            return True
        allowed = getattr(run_processes.run_actions(info.status, path), action)  # the panel's rule too
        return allowed and not (action == "stop" and str(path) in self.stopping)

    def selected_path(self) -> Path | None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return Path(key.value) if key.value else None

    def _selected_or_say(self) -> Path | None:
        path = self.selected_path()
        if path is None:
            self.notify("No run selected", severity="warning")
        return path

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        path = self._selected_or_say()
        if path is not None:
            self._open_training(run_dir=path)

    def _open_training(self, run_dir: Path | None = None, settings=None) -> None:
        """Reuse the training screen underneath when there is one, rather than stacking another."""
        stack = self.app.screen_stack
        below = stack[-2] if len(stack) >= 2 else None
        if below is not None and navigation.is_screen(below, "training"):
            self.app.pop_screen()
            if run_dir is not None:
                below.show_run(run_dir)
            else:
                below.show_form(settings)
        else:
            navigation.open_screen(self.app, "training", run_dir=run_dir, settings=settings, new=True)

    def action_stop(self) -> None:
        path = self._selected_or_say()
        if path is None:
            return
        try:
            run_processes.stop_run(path)
            self.notify(f"Stop requested for {escape(path.name)}")
        except RunControlError as e:
            self.notify(escape(e), severity="warning")
            return
        self.stopping.add(str(path))
        self.refresh_runs()
        self._fast = self._fast or self.set_interval(0.1, self.refresh_runs)  # the stop shows at once

    async def action_resume(self) -> None:
        path = self._selected_or_say()
        if path is None:
            return
        try:
            await serving_policy.resume_run(path)
            self.notify(f"Resuming {path.name}")
        except (RunControlError, PolicyRefusal) as e:
            self.notify(escape(e), severity="warning")
        self.refresh_runs()

    def action_delete(self) -> None:
        path = self._selected_or_say()
        if path is None:
            return

        def done(yes: bool | None) -> None:
            if not yes:
                self.notify("Nothing deleted")
                return
            try:
                run_processes.delete_run(path)
                self.notify(f"Deleted {escape(path.name)}")
            except (RunControlError, OSError) as e:
                self.notify(escape(e), severity="error")
            self.refresh_runs()

        self.app.push_screen(ConfirmScreen(f"Delete run [b]{escape(path.name)}[/b] and its checkpoints?"), done)

    def action_duplicate(self) -> None:
        path = self._selected_or_say()
        if path is None:
            return
        try:
            settings = run_processes.run_settings(path)
        except ConfigError as e:
            self.notify(escape(e), severity="error")
            return
        self._open_training(settings=settings)

    def action_new_run(self) -> None:
        self._open_training()

    def action_compare(self) -> None:
        navigation.open_screen(self.app, "compare_runs")

    def action_back(self) -> None:
        self.app.pop_screen()

    def palette_commands(self):
        yield "Runs: watch the selected run", "Open its live panel", self.action_open
        yield "Runs: stop the selected run", "Clean stop with a checkpoint", self.action_stop
        yield "Runs: resume the selected run", "Continue from its last checkpoint", self.action_resume
        yield "Runs: delete the selected run", "Asks first", self.action_delete
        yield "Runs: copy settings into a new run", "Opens the form", self.action_duplicate
        yield "Runs: compare", "Val-loss curves and the bigram/MLP/GPT table", self.action_compare
