"""Home: the areas of the tutor and the learner's progress at a glance."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from minigpt.text import markup_escape as escape
from tui import navigation
from tui.areas import AREAS
from tui.common.glance import Glance, glance
from tui.common.header import TutorHeader
from tui.keymap import shown_key_of
from tui.saving import tell_study_notes
from tui.workers import Result, background


class HomeScreen(Screen):
    # The area keys are printed in the list itself; the footer keeps the few that are not.
    # enter has priority so the footer names it (the list's own enter is hidden there).
    BINDINGS = [Binding("enter", "open", "Open", show=True, priority=True, id="home.open"),
                Binding("w", "study_weakest", "Study weakest", show=True, id="home.study_weakest"),
                Binding("ctrl+q", "app.quit", "Quit", id="home.quit")] + [
        Binding(a.key, f"open_area('{a.id}')", a.title, show=False, id=f"home.{a.id}") for a in AREAS
    ]

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        with Horizontal(id="home"):
            with Vertical(id="home-areas"):
                yield Static("[b]Learn how GPT works by reading, computing, training and playing.[/b]",
                             id="home-intro")
                yield OptionList(
                    *[Option(f"[b]{escape(shown_key_of(self.app, f'home.{a.id}', a.key))}[/b]  {a.title}", id=a.id)
                      for a in AREAS],
                    id="area-list",
                )
                yield Static(id="area-description")
            yield Static(id="glance")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#area-list", OptionList).focus()
        self._glance = None
        self._counted_for = None
        opening = self.app.opening_text()
        if opening:  # `minigpt watch`: the run's panel is on its way; counting now would slow it down
            self.query_one("#glance", Static).update(f"[b]{escape(opening)}[/b]")
        else:
            self.query_one("#glance", Static).update("[b]Your progress[/b]\n\n[dim]counting…[/dim]")
            self._counted_for = self._glance_key()
            self.call_after_refresh(self._count_glance)  # a counting thread would slow the first frame
        self.set_interval(2.0, self._follow_run)

    def _follow_run(self) -> None:
        """While home is on screen: the last run's "running at step N" follows it (only the run is
        re-read), and the whole glance is counted again when the database or the runs changed (a
        kata passed in a second app instance: home and the Katas screen then agree)."""
        if self.app.screen is not self:
            return
        if self._counted_for is None:  # held back while a run opened: it did not (or was left)
            if not self.app.opening_text():
                self.refresh_glance()
        elif self._glance_key()[:3] != self._counted_for[:3]:
            self.refresh_glance()
        elif self._glance is not None and self._glance.run_active:
            self.refresh_run_line()

    @dataclass
    class RunLine(Result):
        """The last run's line, read again while it trains."""
        last_run: str | None
        active: bool

    @dataclass
    class Counted(Result):
        """The whole glance, counted."""
        glance: Glance

    @background(thread=True, exclusive=True, group="glance-run")
    def refresh_run_line(self) -> RunLine:
        from tui.common.glance import last_run

        return self.RunLine(*last_run())

    @on(RunLine)
    def _show_run_line(self, message: RunLine) -> None:
        if self._glance is not None:
            self._show_glance(replace(self._glance, last_run=message.last_run, run_active=message.active))

    def on_screen_resume(self) -> None:
        """Count again only when something the glance shows may have changed: back from help or the
        palette nothing has, and a recount (every lesson, deck and kata read, about a second of
        CPU in a thread) made the next key wait on it (help's p95 in bench_latency.py)."""
        if self.app.opening_text():  # a run's panel is about to cover this screen
            return
        if self._glance_key() != self._counted_for:
            self.refresh_glance()

    def _glance_key(self) -> tuple:
        """What the glance depends on, cheaply: this app's writes to the progress database, another
        process's (SQLite's data_version: a kata passed in a second app instance), the runs
        folder's entries, and the minute (cards fall due as time passes)."""
        import sqlite3

        from minigpt import paths

        store = getattr(self.app, "store", None)
        conn = getattr(store, "conn", None)
        writes = getattr(conn, "total_changes", None)
        try:
            others = conn.execute("PRAGMA data_version").fetchone()[0] if conn is not None else None
        except sqlite3.Error:  # a busy or closed database: the other parts still tell
            others = None
        try:
            runs = paths.runs_dir().stat().st_mtime_ns
        except OSError:
            runs = None
        return writes, others, runs, int(time.time() // 60)

    def refresh_glance(self) -> None:
        self._counted_for = self._glance_key()
        self._count_glance()

    @background(thread=True, exclusive=True, group="glance")
    def _count_glance(self) -> Counted:
        """Count in a worker: the card queue reads every deck (about a second on a busy machine),
        which must not hold back the first frame or the return to this screen."""
        return self.Counted(glance(self.app.store))

    @on(Counted)
    def _counted(self, message: Counted) -> None:
        self._show_glance(message.glance)
        tell_study_notes(self)

    def _show_glance(self, g: Glance) -> None:
        self._glance = g
        lines = ["[b]Your progress[/b]", "",
                 f"Lessons read   {g.lessons_read} / {g.lessons_total}"]
        if g.cards_due is not None:
            lines.append(f"Cards to study {g.cards_due}")
        if g.plan:
            lines += g.plan
        if g.katas_total:
            lines.append(f"Katas passed   {g.katas_passed} / {g.katas_total}")
        if g.ready is not None:
            lines.append(f"Ready          {100 * g.ready:.1f}%")  # a tenth: one session shows
            if g.weakest:
                weakest_key = escape(shown_key_of(self.app, "home.study_weakest", "w"))
                lines.append(f"Weakest [dim]({weakest_key}: study)[/dim]")
                lines += [f"{round(100 * fig):3d}% {escape(_clip(title, 19))}" for _, title, fig, _ in g.weakest]
        if g.last_run is not None:
            lines += ["", "Last run", *(f"  {escape(part)}" for part in g.last_run.split("\n"))]
        if g.last_lesson:
            lines += ["", "[dim]Continue with[/dim]", f"[dim]  {escape(_clip(g.last_lesson, 21))}[/dim]"]
        palette, help_key = (escape(f"{shown_key_of(self.app, i, k):<6}") for i, k in
                             (("app.palette", "ctrl+p"), ("app.help", "?")))
        lines += ["", f"[dim]{palette} jump anywhere[/dim]", f"[dim]{help_key} every key[/dim]"]
        self.query_one("#glance", Static).update("\n".join(lines))

    def action_study_weakest(self) -> None:
        """The weakest lesson's next step: read it, quiz it (which also reviews its cards), or its katas."""
        if self._glance is None or not self._glance.weakest:
            self.notify("Readiness is still being counted.")
            return
        lesson, _title, _figure, step = self._glance.weakest[0]
        if step == "read":
            self.app.open_lesson(lesson)
        elif step == "katas":
            navigation.open_screen(self.app, "katas", lesson)
        else:
            navigation.open_screen(self.app, "quiz", lesson)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        for a in AREAS:
            if a.id == event.option.id:
                self.query_one("#area-description", Static).update(a.description)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.app.open_area(event.option.id)

    def action_open(self) -> None:
        ol = self.query_one("#area-list", OptionList)
        if ol.highlighted is not None:
            self.app.open_area(ol.get_option_at_index(ol.highlighted).id)

    def action_open_area(self, area_id: str) -> None:
        self.app.open_area(area_id)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"
