"""One kata: the stub in a Python editor, the hidden tests a key away, hints one at a time.

The code runs in the bounded runner (minigpt.katas.sandbox: time, output and memory limits) and
is judged by this process against the reference; a served session runs it only with
``--allow-code``. The draft is saved as the learner types, so leaving loses nothing. The solution
and the diff against it appear after a pass, or after giving up (recorded as such).

A mock interview opens a kata in a scratch buffer (``scratch``): it starts from the stub (or the
code written for that question so far), the practice draft is neither shown nor saved, only a pass
in this buffer counts (``passed``), hints are not recorded, and the solution waits for a pass.

A kata that FSRS brings back (``resolve=True``, minigpt.study.kata_cards) opens on the blank stub
in a scratch buffer too: the saved draft is neither shown nor overwritten, the re-solve is rated
when it ends (its first pass, or giving up), and the earlier draft is then shown below.
"""

from __future__ import annotations

import difflib
import os
import shlex
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Static, TextArea

from minigpt import guarded, serving_policy, spawn
from minigpt.errors import PolicyRefusal
from minigpt.katas import history
from minigpt.katas.catalogue import Kata
from minigpt.study import kata_cards
from minigpt.study.scheduler import RATING_NAMES, describe_time
from minigpt.text import markup_escape as escape
from minigpt.text import printable
from tui.common.header import TutorHeader
from tui.saving import keeps_screen
from tui.workers import Result, background

DRAFT_SAVE_S = 1.0  # the draft is saved once typing pauses this long


class KataScreen(Screen):
    # The ctrl keys work while typing (priority: before the editor sees them), and none of them is
    # one a browser keeps for itself (ctrl+t, ctrl+n, ctrl+w), so they work under `minigpt serve`.
    # Out of the editor (escape), single letters do the same.
    BINDINGS = [
        Binding("escape", "back", "Back", id="kata.back"),
        Binding("ctrl+r", "run", "Run", show=True, priority=True, id="kata.run"),
        Binding("ctrl+b", "hint", "Hint", show=True, priority=True, id="kata.hint"),
        Binding("ctrl+g", "solution", "Solution", show=True, priority=True, id="kata.solution"),
        Binding("ctrl+f", "diff", "Diff", show=True, priority=True, id="kata.diff"),
        Binding("ctrl+o", "external_editor", "$EDITOR", show=True, priority=True, id="kata.external_editor"),
        Binding("r", "run", "Run", show=False, id="kata.run_letter"),
        Binding("h", "hint", "Hint", show=False, id="kata.hint_letter"),
        Binding("s", "solution", "Solution", show=False, id="kata.solution_letter"),
        Binding("d", "diff", "Diff", show=False, id="kata.diff_letter"),
        Binding("e", "external_editor", "$EDITOR", show=False, id="kata.external_editor_letter"),
        Binding("i", "edit", "Edit", show=False, id="kata.edit"),
    ]

    def __init__(self, kata: Kata, *, scratch: str | None = None, resolve: bool = False):
        super().__init__()
        self.kata = kata
        self.resolving = resolve and scratch is None  # a due re-solve: see the module docstring
        self.resolve: kata_cards.Resolve | None = None
        self.earlier_draft: str | None = None
        self.scratch = scratch is not None  # a mock interview's buffer: see the module docstring
        self.start_text = scratch or kata.stub
        self.latest_code = self.start_text  # the code as last typed (read once the screen is gone)
        self.hints_shown = 0
        self.passed = False
        self.solution_shown = False
        self.confirm_give_up = False
        self.running = False
        self.report = None
        self._stop = threading.Event()
        self._save_timer: Timer | None = None
        self.extra_text = ""  # the solution or the diff shown below the results, as text

    def compose(self) -> ComposeResult:
        yield TutorHeader()
        yield Static(id="kata-status")
        yield TextArea.code_editor("", language="python", id="kata-editor", soft_wrap=False)
        with VerticalScroll(id="kata-results"):
            yield Static(id="kata-result")
            yield Static(id="kata-hints")
            yield Static(id="kata-extra")
        yield Footer()

    @keeps_screen
    def on_mount(self) -> None:
        editor = self.query_one(TextArea)
        if self.scratch:  # an interview: from the stub, with nothing carried over from practice
            self.sub_title = f"Kata: {self.kata.name} (interview, scratch copy)"
            editor.load_text(self.start_text)
        else:
            self.sub_title = f"Kata: {self.kata.name}"
            record = history.record(self.app.store, self.kata.name)
            self.passed, self.hints_shown = record.passed, min(record.hints_used, len(self.kata.hints))
            self.solution_shown = record.gave_up
            editor.load_text(record.draft or self.kata.stub)
            if self.resolving:  # from the blank stub; the draft is kept apart until the rating
                self.resolve = kata_cards.Resolve(self.app.store, self.kata.name)
                self.earlier_draft = record.draft
                self.passed, self.hints_shown, self.solution_shown = False, 0, False
                editor.load_text(self.kata.stub)
        editor.focus()
        self.query_one("#kata-result", Static).update(self._intro())
        self._show_hints()
        self._draw_status()
        if not self.scratch:
            history.mark_opened(self.app.store, self.kata.name)

    def _intro(self) -> Text:
        edges = "\n".join(f"  • {e}" for e in self.kata.edge_cases)
        return Text(f"{self.kata.title}. Practises: {', '.join(self.kata.lessons)}.\n"
                    f"Write {self.kata.function}() above, then ctrl+r to run the hidden tests.\n"
                    f"Its edge cases:\n{edges}")

    def _draw_status(self, note: str = "") -> None:
        state = "[green]✓ passed[/green]" if self.passed else ("[yellow]solution seen[/yellow]" if self.solution_shown else "not passed yet")
        if self.report is not None and not self.report.error and not self.report.passed:
            state = f"[red]{self.report.passed_cases}/{self.report.total} cases[/red]"
        hints = f"hints {self.hints_shown}/{len(self.kata.hints)}"
        if self.resolve is not None:
            hints += (" · re-solve from the stub (your draft is kept)" if self.resolve.rating is None
                      else f" · re-solve rated {RATING_NAMES[self.resolve.rating]}")
        self.query_one("#kata-status", Static).update(
            f"[b]{escape(self.kata.name)}[/b] · {state} · {hints}{' · ' + note if note else ''}")

    # -- editing and the draft ------------------------------------------------------------------
    @property
    def code(self) -> str:
        return self.query_one(TextArea).text

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.latest_code = event.text_area.text
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.set_timer(DRAFT_SAVE_S, self._save_draft)

    @keeps_screen
    def _save_draft(self) -> None:
        self._save_timer = None
        self.latest_code = self.code
        if not (self.scratch or self.resolving):  # the interview keeps its scratch code; a re-solve none
            history.save_draft(self.app.store, self.kata.name, self.code)

    def on_unmount(self) -> None:
        self._stop.set()  # a grading run still going is stopped

    def action_back(self) -> None:
        editor = self.query_one(TextArea)
        if editor.has_focus:  # escape leaves the editor first; the single-letter keys then work
            self.query_one("#kata-results").focus()
            self._draw_status("i edit · r run · h hint · s solution · d diff · e $EDITOR")
            return
        if self._save_timer is not None:
            self._save_timer.stop()
            self._save_draft()
        self.app.pop_screen()

    def action_edit(self) -> None:
        self.query_one(TextArea).focus()
        self._draw_status()

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "diff":
            return self.passed or self.solution_shown
        if action == "hint":
            return self.hints_shown < len(self.kata.hints) or None
        if action == "solution" and self.scratch:  # no giving up mid-interview: after a pass only
            return self.passed
        return True

    # -- grading --------------------------------------------------------------------------------
    def action_run(self) -> None:
        # ctrl+r is a priority binding: it is handled before keys typed just before it have reached
        # the editor (fast typing, a paste, a browser's key burst). Read the code after them.
        self.query_one(TextArea).call_later(self._run_now)

    def _run_now(self) -> None:
        if self.running:
            return
        result = self.query_one("#kata-result", Static)
        try:  # served to a browser: the learner's code runs only with --allow-code
            serving_policy.check_code(self.code, originals=[self.kata.stub])
        except PolicyRefusal as e:
            result.update(Text(str(e)))
            return
        if self._save_timer is not None:  # what runs is what is kept
            self._save_timer.stop()
        self._save_draft()
        self.running = True
        self._stop.clear()
        result.update(Text("Running the hidden tests in a fresh Python (torch loads first)…"))
        self._draw_status("running…")
        self._grade(self.code, "app")

    @dataclass
    class Graded(Result):
        """The hidden tests' report on the code run (``source``: where the attempt came from)."""
        report: object
        source: str

    @background(thread=True, exclusive=True, group="kata-grade", what="Grading the kata")
    def _grade(self, code: str, source: str) -> Graded:
        from minigpt.katas.sandbox import grade_source

        try:
            report = grade_source(self.kata, code, stop=self._stop)
        finally:
            self.running = False
        return self.Graded(report, source)

    @on(Graded)
    def _graded(self, message: Graded) -> None:
        """(Dropped once the learner left the kata: not an attempt shown, nor recorded.)"""
        report, source = message.report, message.source
        self.report = report
        self._record(report, source)
        if report.passed and not self.passed:
            self.passed = True
            self.notify(f"Kata {self.kata.name} passed: it counts toward {', '.join(self.kata.lessons)}", timeout=5)
        text = Text(printable(report.summary(), keep="\n"), style="green" if report.passed else "")
        if report.failures[1:]:
            text.append("\n\nThe other failing cases:\n" + "\n".join(printable(f.line()) for f in report.failures[1:]))
        if report.passed:
            text.append("\nctrl+g: the reference solution · ctrl+f: your code against it")
        if report.output:
            text.append(f"\n\nYour code printed (not read as a verdict):\n{printable(report.output[-600:], keep=chr(10))}",
                        style="dim")
        self.query_one("#kata-result", Static).update(text)
        self.query_one("#kata-results").scroll_home(animate=False)
        self._draw_status(f"{report.seconds:.1f} s")
        self.refresh_bindings()

    @keeps_screen
    def _record(self, report, source: str) -> None:
        if report.error and report.total == 0 and "no result" in report.error and self._stop.is_set():
            return  # stopped because the learner left: not an attempt
        history.record_attempt(self.app.store, self.kata.name, passed=report.passed,
                                cases_failed=len(report.failures), cases_total=report.total,
                                source="interview" if self.scratch else source)
        if self.resolve is not None:
            mistake = next((f.mistake for f in report.failures if f.mistake), None)
            self._rated(self.resolve.checked(passed=report.passed, mistake=mistake))
        elif not self.scratch:
            kata_cards.sync_passed(self.app.store)  # a first pass makes the kata a card

    def _rated(self, rating: int | None, show_draft: bool = True) -> None:
        """The re-solve ended: say its rating and next date, and show the earlier draft below
        (not when the solution takes that place: giving up)."""
        if rating is None:
            return
        due = describe_time(self.resolve.rated.due)
        self.notify(f"Re-solve rated {RATING_NAMES[rating]}: {self.kata.name} comes back {due}", timeout=6)
        self._draw_status()
        if not show_draft:
            return
        self.extra_text = self.earlier_draft or "(no earlier draft was saved)"
        self.query_one("#kata-extra", Static).update(
            Text(f"Your earlier draft (kept as it was):\n\n{printable(self.extra_text, keep=chr(10))}"))

    # -- hints, solution, diff ------------------------------------------------------------------
    def _show_hints(self) -> None:
        shown = self.kata.hints[: self.hints_shown]
        self.query_one("#kata-hints", Static).update(
            Text("\n".join(f"Hint {i}: {h}" for i, h in enumerate(shown, start=1)), style="italic") if shown else "")

    @keeps_screen
    def action_hint(self) -> None:
        if self.hints_shown >= len(self.kata.hints):
            self.notify("No more hints: ctrl+g (or s) shows the solution")
            return
        self.hints_shown += 1
        if not self.scratch:
            history.record_hints(self.app.store, self.kata.name, self.hints_shown)
        if self.resolve is not None:
            self.resolve.hint_shown(self.hints_shown)
        self._show_hints()
        self.query_one("#kata-hints").scroll_visible(animate=False)
        self._draw_status()
        self.refresh_bindings()

    @keeps_screen
    def action_solution(self) -> None:
        if not (self.passed or self.solution_shown or self.confirm_give_up):
            self.confirm_give_up = True
            self.notify("Not passed yet: press ctrl+g again to give up and see the solution (recorded as giving up)",
                        timeout=6)
            return
        if not self.passed:
            history.record_solution_shown(self.app.store, self.kata.name)
        if self.resolve is not None and not self.passed:
            self._rated(self.resolve.give_up(), show_draft=False)
        self.solution_shown = True
        self.extra_text = self.kata.solution
        self.query_one("#kata-extra", Static).update(
            Syntax(self.kata.solution, "python", theme="ansi_dark", background_color="default"))
        self.query_one("#kata-extra").scroll_visible(animate=False)
        self._draw_status("the reference solution is below")
        self.refresh_bindings()

    def action_diff(self) -> None:
        if not (self.passed or self.solution_shown):
            self.notify("The diff against the reference comes after a pass, or after giving up (ctrl+g)")
            return
        diff = "".join(difflib.unified_diff(self.code.splitlines(keepends=True), self.kata.solution.splitlines(keepends=True),
                                            "your code", "the reference", n=1))
        self.extra_text = diff or "(identical)"
        self.query_one("#kata-extra", Static).update(
            Syntax(diff or "(identical)", "diff", theme="ansi_dark", background_color="default"))
        self.query_one("#kata-extra").scroll_visible(animate=False)

    # -- $EDITOR --------------------------------------------------------------------------------
    def action_external_editor(self) -> None:
        """Open the code in $VISUAL / $EDITOR (the app steps aside), then grade it on return."""
        if serving_policy.is_served():
            self.notify("Your own editor opens only in a terminal session, not in the browser", severity="warning")
            return
        command = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        with tempfile.TemporaryDirectory(prefix="minigpt-kata-") as tmp:
            path = Path(tmp) / f"{self.kata.function}.py"
            path.write_text(self.code, encoding="utf-8")
            try:
                with self.app.suspend():
                    spawn.run_in_terminal([*shlex.split(command), str(path)])
            except Exception as e:  # no terminal to hand over (SuspendNotSupported), or no such editor
                self.notify(f"Could not open {escape(command)}: {escape(str(e) or type(e).__name__)}", severity="error")
                return
            try:
                text = guarded.read_text(path, guarded.TEXT_FILE_BYTES)
            except (OSError, UnicodeDecodeError) as e:
                self.notify(f"Could not read the edited file back: {escape(str(e))}", severity="error")
                return
        self.query_one(TextArea).load_text(text)
        self._save_draft()
        self.action_run()
