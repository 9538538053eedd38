"""Runs: every training run with its status, whoever started it; open, stop, resume, delete, copy.

The status comes from minigpt.runs.listing (a "running" run whose process is gone shows as failed), and
the table refreshes every second so runs started elsewhere appear by themselves.
"""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from minigpt import paths, serving_policy
from minigpt.control import form as run_form
from minigpt.control import workers as rc
from minigpt.runs import listing as runs
from minigpt.models.config import ConfigError
from tui.widgets.training_confirm import ConfirmScreen
from tui.widgets.training_panel import state_label
from tui import navigation

COLUMNS = ("status", "run", "model", "params", "device", "step", "best val", "age")


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def row_for(info: runs.RunInfo) -> tuple[str, ...]:
    state = rc.run_state(info.path)
    total = f"/{info.total:g}s" if info.total_unit == "seconds" and info.total else (
        f"/{info.total}" if info.total else "")
    return (state_label(state.status), info.name, (info.model or "?").upper(),
            f"{info.n_params:,}" if info.n_params else "–", info.device or "–", f"{info.step}{total}",
            f"{info.best_val:.4f}" if info.best_val is not None else "–", _age(info.age))


class RunsScreen(Screen):
    BINDINGS = [
        Binding("enter", "open", "Watch", show=True),
        Binding("s", "stop", "Stop", show=True),
        Binding("r", "resume", "Resume", show=True),
        Binding("d", "delete", "Delete", show=True),
        Binding("c", "duplicate", "Copy settings", show=True),
        Binding("n", "new_run", "New run", show=True),
        Binding("v", "compare", "Compare", show=True),
        Binding("escape", "back", "Back", show=True),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="runs-summary")
        yield DataTable(id="runs-table", cursor_type="row", zebra_stripes=True)
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
        found = runs.list_runs()
        table.clear()
        for info in found:
            table.add_row(*row_for(info), key=str(info.path))
        if keep is not None and str(keep) in {str(i.path) for i in found}:
            table.move_cursor(row=table.get_row_index(str(keep)))
        summary = self.query_one("#runs-summary", Static)
        if found:
            summary.update(f"{len(found)} run(s) in {escape(str(paths.runs_dir()))}")
        else:
            summary.update("No runs yet: press [b]n[/b] to configure one, or run [b]minigpt train[/b] in a terminal.")

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
                if settings is not None:
                    below.form.fill(run_form.form_from_config(settings))
                below._set_mode("form")
        else:
            navigation.open_screen(self.app, "training", run_dir=run_dir, settings=settings, new=True)

    def action_stop(self) -> None:
        path = self._selected_or_say()
        if path is None:
            return
        try:
            rc.stop_run(path)
            self.notify(f"Stop requested for {path.name}")
        except rc.RunControlError as e:
            self.notify(str(e), severity="warning")

    async def action_resume(self) -> None:
        path = self._selected_or_say()
        if path is None:
            return
        try:
            await serving_policy.resume_run(path)
            self.notify(f"Resuming {path.name}")
        except (rc.RunControlError, serving_policy.PolicyRefusal) as e:
            self.notify(str(e), severity="warning")
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
                rc.delete_run(path)
                self.notify(f"Deleted {path.name}")
            except (rc.RunControlError, OSError) as e:
                self.notify(str(e), severity="error")
            self.refresh_runs()

        self.app.push_screen(ConfirmScreen(f"Delete run [b]{escape(path.name)}[/b] and its checkpoints?"), done)

    def action_duplicate(self) -> None:
        path = self._selected_or_say()
        if path is None:
            return
        try:
            settings = rc.run_settings(path)
        except ConfigError as e:
            self.notify(str(e), severity="error")
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
