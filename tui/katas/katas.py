"""The katas: every coding exercise with the learner's progress, or those of one lesson.

Passed katas that FSRS brings back (minigpt.study.kata_cards) are marked due and listed first;
opening one starts its re-solve from the blank stub, the saved draft kept apart."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from minigpt.errors import KataError, TutorError
from minigpt.katas import history
from minigpt.katas.catalogue import load_katas
from minigpt.study import kata_cards
from minigpt.text import markup_escape as escape
from tui import navigation
from tui.common.header import TutorHeader

MARKS = {"passed": "[green]✓[/green]", "gave up": "[yellow]◌[/yellow]", "tried": "[red]✗[/red]", "new": "·"}


class KatasScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="katas.back"),
        Binding("enter", "open", "Open", show=True, id="katas.open"),
        Binding("a", "show_all", "All katas", id="katas.show_all"),
    ]

    def __init__(self, lesson: str | None = None):
        super().__init__()
        self.lesson = lesson
        self.katas = []
        self.due: set[str] = set()  # katas due to be solved again from the stub

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        yield Static(id="katas-summary")
        yield OptionList(id="kata-list")
        yield Static(id="kata-description")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Katas: write the pieces of a GPT yourself"
        self.reload()
        self.query_one(OptionList).focus()

    def on_screen_resume(self) -> None:
        self.reload()

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "show_all":
            return self.lesson is not None
        return True

    def reload(self) -> None:
        summary = self.query_one("#katas-summary", Static)
        try:
            every = load_katas()
        except KataError as e:
            summary.update(f"[b red]A kata could not be read:[/b red] {escape(str(e))}")
            return
        self.katas = [k for k in every if self.lesson is None or self.lesson in k.lessons] or every
        mine = history.records(self.app.store)
        try:
            self.due = {c.kata for c in kata_cards.due(self.app.store)}
        except TutorError:  # a busy or read-only database: the list still shows, without due marks
            self.due = set()
        self.katas.sort(key=lambda k: k.name not in self.due)  # due first, each group in lesson order
        ol = self.query_one(OptionList)
        keep = ol.highlighted
        ol.clear_options()
        for kata in self.katas:
            status = mine[kata.name].status if kata.name in mine else "new"
            mark = "[b]⟳[/b]" if kata.name in self.due else MARKS[status]
            title = kata.title if len(kata.title) <= 50 else kata.title[:49] + "…"  # one line at 80 columns
            ol.add_option(Option(f"{mark} {kata.name:<21} {escape(title)}", id=kata.name))
        passed = sum(1 for k in every if k.name in mine and mine[k.name].passed)
        scope = f" for [i]{escape(self.lesson)}[/i]" if self.lesson else ""
        due = f" · [b]{len(self.due)} due[/b]" if self.due else ""
        summary.update(f"[b]Katas[/b]{scope} · {passed}/{len(every)} passed{due}  "
                       f"[dim]✓ passed ✗ tried ◌ solution seen{' ⟳ due: solve again' if due else ''}[/dim]")
        ol.highlighted = keep if keep is not None and keep < len(self.katas) else 0

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        for kata in self.katas:
            if kata.name == event.option.id:
                self.query_one("#kata-description", Static).update(
                    f"[dim]{escape(kata.signature.splitlines()[0])}[/dim]\nPractises: {escape(', '.join(kata.lessons))}")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._open(event.option.id)

    def action_open(self) -> None:
        ol = self.query_one(OptionList)
        if ol.highlighted is not None:
            self._open(ol.get_option_at_index(ol.highlighted).id)

    def action_show_all(self) -> None:
        self.lesson = None
        self.refresh_bindings()
        self.reload()

    def _open(self, name: str) -> None:
        for kata in self.katas:
            if kata.name == name:
                navigation.open_screen(self.app, "kata", kata, resolve=name in self.due)
