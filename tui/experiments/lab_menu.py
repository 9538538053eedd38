"""Which lab job to start (x in a lesson with more than one, or whose job kept a run): one job per
choice, never all at once, and a kept run's "open in the explorer" and "compare" (ids ``action:job``).

Each line says the job's title and its state (not run, running, done); a number or enter on a line
dismisses the menu with that job's name, escape with None. The lesson starts what was chosen.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


class LabMenu(ModalScreen):
    BINDINGS = [Binding("escape", "close", "Close", id="lab_menu.close")] + [
        Binding(str(n), f"choose({n - 1})", f"Job {n}", show=False, id=f"lab_menu.job_{n}") for n in range(1, 10)]

    def __init__(self, jobs: list[tuple[str, str, str]]):
        """``jobs``: (name, title, state) of each of the lesson's lab jobs, in the lesson's order, then
        the kept runs' choices."""
        super().__init__()
        self.jobs = jobs

    def compose(self) -> ComposeResult:
        yield Static("[b]Start which lab job, or open its run?[/b]  (number or enter, escape closes)",
                     id="lab-menu-title")
        yield OptionList(*[Option(f"[b]{n}[/b]  {title}  [dim]({state if ':' in name else f'{name}: {state}'})[/dim]",
                                  id=name)
                           for n, (name, title, state) in enumerate(self.jobs, start=1)], id="lab-menu")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_choose(self, index: int) -> None:
        if index < len(self.jobs):
            self.dismiss(self.jobs[index][0])

    def action_close(self) -> None:
        self.dismiss(None)
