"""Study to a date: set the interview day, the lessons in scope and the new cards a day, read the
plan day by day.

The plan is minigpt.study.plan's (the same text as ``minigpt plan``); an empty date removes it
and the study sessions go back to the daily new-card limit. New cards a day is the flashcards'
setting (``minigpt plan --new-per-day N`` sets it too): the fix an off-pace plan names is here.
``?`` and F1 open the keys even while a field has the focus (no field takes a "?").
"""

from __future__ import annotations

from datetime import date, timedelta

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from minigpt.errors import DeckError, PlanError, StoreError
from minigpt.study import plan
from minigpt.text import markup_escape as escape
from tui.common.header import TutorHeader


class PlanField(Input):
    """A field of the plan form: "?" is never part of a date, a lesson id or a number, so it
    leaves the key to the help (Textual drops bindings of keys a focused field would type)."""

    HELP_TITLE = "plan field (tab: the next one)"
    BINDINGS = [Binding("enter", "submit", "Save the day, lessons and new cards a day; plan", id="plan_field.submit")]

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return character != "?" and super().check_consume_key(key, character)

# What the plan stores is capped where it is typed: a date, and every lesson's id listed once.
DATE_CHARS = 32
LESSONS_CHARS = 4_000


class StudyPlanScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="study_plan.back"),
        # Before the focused field types it (PlanField leaves "?" out of what it takes).
        Binding("question_mark", "app.help", "Help", key_display="?", priority=True, id="study_plan.help"),
    ]
    PALETTE_PREFIX = "Interview plan"

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with Horizontal(id="plan-form"):
            yield PlanField(placeholder="interview day YYYY-MM-DD (empty: no date)", id="plan-date",
                            max_length=DATE_CHARS)
            yield PlanField(placeholder="lessons, comma-separated (empty: all)", id="plan-lessons",
                            max_length=LESSONS_CHARS)
            yield PlanField(placeholder="new a day", id="plan-new", type="integer", max_length=4,
                            tooltip="new cards a day")
        yield Static("[dim]day · lessons (empty: all) · new cards a day   enter: save and plan · "
                     "empty date: study as usual[/dim]", id="plan-help")
        with VerticalScroll(id="plan-body"):
            yield Static(id="plan-text")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Study to a date"
        day, lessons = plan.plan_settings(self.app.store)
        self.query_one("#plan-date", Input).value = (day or date.today() + timedelta(days=14)).isoformat()
        self.query_one("#plan-lessons", Input).value = ",".join(lessons)
        self.query_one("#plan-new", Input).value = str(self._session().new_per_day())
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
        before = plan.plan_settings(self.app.store)
        try:
            session = self._session()
            pace = self._new_per_day(session)
            if not raw:
                if save:
                    plan.set_plan(self.app.store, None)
                    session.set_new_per_day(pace)
                text.update("No interview date: studying as usual (the daily new-card limit).")
                return
            day = plan.parse_date(raw)
            made = plan.make_plan(self.app.store, session.deck, day, lessons=lessons,
                                      new_per_day=pace, scheduler=session.scheduler,
                                      lesson_order=session.lesson_order)
            if save:
                plan.set_plan(self.app.store, day, lessons)
                session.set_new_per_day(pace)
        except (PlanError, DeckError, StoreError) as e:
            text.update(f"[red]✗[/red] {escape(str(e))}")
            return
        if save:  # a scope set before is replaced: say what it was
            change = plan.scope_change(before[1], lessons) if before[0] is not None else ""
            saved = "[green]Saved.[/green] " + (escape(change) + "\n" if change else "")
        else:
            saved = ("" if before[0] == day and pace == session.new_per_day()
                     else "[dim]Not saved yet: enter saves.[/dim] ")
        text.update(saved + escape("\n".join(plan.describe(made))))

    def _new_per_day(self, session) -> int:
        """The new-cards-a-day field, or the setting when it is empty; refused in words otherwise."""
        raw = self.query_one("#plan-new", Input).value.strip()
        if not raw:
            return session.new_per_day()
        if not raw.isdigit():
            raise PlanError(f"new cards a day is a whole number of at least 0, not {raw!r}")
        return int(raw)
