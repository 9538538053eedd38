"""Study to a date: set the interview day and the lessons in scope, read the plan day by day.

The plan is minigpt.study.plan's (the same text as ``minigpt plan``); an empty date removes it
and the study sessions go back to the daily new-card limit.
"""

from __future__ import annotations

from datetime import date, timedelta

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from minigpt.errors import DeckError, PlanError, StoreError
from minigpt.study import plan as planning
from minigpt.text import markup_escape as escape

# What the plan stores is capped where it is typed: a date, and every lesson's id listed once.
DATE_CHARS = 32
LESSONS_CHARS = 4_000


class StudyPlanScreen(Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]
    PALETTE_PREFIX = "Interview plan"

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="plan-form"):
            yield Input(placeholder="interview day YYYY-MM-DD (empty: no date)", id="plan-date",
                        max_length=DATE_CHARS)
            yield Input(placeholder="lessons, comma-separated (empty: all)", id="plan-lessons",
                        max_length=LESSONS_CHARS)
        yield Static("[dim]enter: save and plan · an empty date studies as usual[/dim]", id="plan-help")
        with VerticalScroll(id="plan-body"):
            yield Static(id="plan-text")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Study to a date"
        day, lessons = planning.plan_settings(self.app.store)
        self.query_one("#plan-date", Input).value = (day or date.today() + timedelta(days=14)).isoformat()
        self.query_one("#plan-lessons", Input).value = ",".join(lessons)
        self.query_one("#plan-date", Input).focus()
        self.show_plan(save=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.show_plan(save=True)

    def _session(self):
        from minigpt.study.anki import with_user_cards
        from minigpt.study.decks import cached_decks
        from minigpt.study.review import StudySession

        return StudySession(self.app.store, with_user_cards(cached_decks(), self.app.store))

    def show_plan(self, *, save: bool) -> None:
        text = self.query_one("#plan-text", Static)
        raw = self.query_one("#plan-date", Input).value.strip()
        lessons = tuple(x.strip() for x in self.query_one("#plan-lessons", Input).value.split(",") if x.strip())
        try:
            if not raw:
                if save:
                    planning.set_plan(self.app.store, None)
                text.update("No interview date: studying as usual (the daily new-card limit).")
                return
            day = planning.parse_date(raw)
            session = self._session()
            made = planning.make_plan(self.app.store, session.deck, day, lessons=lessons,
                                      new_per_day=session.new_per_day(), scheduler=session.scheduler,
                                      lesson_order=session.lesson_order)
            if save:
                planning.set_plan(self.app.store, day, lessons)
        except (PlanError, DeckError, StoreError) as e:
            text.update(f"[red]✗[/red] {escape(str(e))}")
            return
        saved = "[green]Saved.[/green] " if save else ("" if planning.plan_settings(self.app.store)[0] == day
                                                       else "[dim]Not saved yet: enter saves.[/dim] ")
        text.update(saved + escape("\n".join(planning.describe(made))))
