"""A runnable code block: shows the code, runs it (Enter or r), and lets the learner edit it.

`e` opens the code in an editor ("try scale=True"); ctrl+s runs the edited code, escape leaves the
editor keeping the edit, and `x` puts the original back. In a session served to a browser, edited
code runs only if the server allows it (``minigpt.serving_policy``). Original or edited, the code runs through
the lessons' own bounded runner (``minigpt.snippets.run_snippet``: its own process, a time limit),
in a worker thread so the app stays responsive; the output shows under the code.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from rich.syntax import Syntax
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Static, TextArea

from minigpt import serving_policy
from minigpt.errors import PolicyRefusal
from minigpt.snippets import run_snippet
from minigpt.text import printable
from tui.workers import Result, background

TIME_LIMIT_S = 20.0
MAX_SHOWN_CHARS = 20_000   # the runner bounds the output; this keeps the widget small as well


class SnippetEditor(TextArea):
    """The code editor of one snippet; ctrl+s runs, escape returns to reading."""

    BINDINGS = [
        Binding("ctrl+s", "run_edited", "Run edited code", show=True, id="snippet_editor.run_edited"),
        Binding("escape", "leave", "Stop editing", show=True, id="snippet_editor.leave"),
    ]

    async def _on_key(self, event) -> None:
        # TextArea's own escape (with tab indenting) only moves focus on; ours leaves the editor.
        if event.key == "escape":
            event.stop()
            event.prevent_default()
            self.action_leave()
            return
        await super()._on_key(event)

    def action_run_edited(self) -> None:
        self.parent.run_code()

    def action_leave(self) -> None:
        self.parent.stop_editing()


class SnippetBlock(Vertical, can_focus=True):
    BINDINGS = [
        Binding("enter,r", "run", "Run", show=True, id="snippet.run"),
        Binding("e", "edit", "Edit", show=True, id="snippet.edit"),
        Binding("x", "reset", "Original code", show=True, id="snippet.reset"),
    ]

    state = reactive("idle")  # idle | running | done | failed | timeout | truncated

    def __init__(self, code: str, index: int, **kwargs):
        super().__init__(classes="snippet", **kwargs)
        self.original = code
        self.code = code
        self.index = index
        self.output_text = ""
        self.editing = False
        self._stop = threading.Event()  # set when this block goes away: the run is killed at once

    @property
    def edited(self) -> bool:
        return self.code != self.original

    def compose(self) -> ComposeResult:
        yield Static(id="snippet-title", classes="snippet-title")
        yield Static(self._highlighted(), classes="snippet-code")
        yield SnippetEditor(self.code, language="python", soft_wrap=True, show_line_numbers=False,
                            classes="snippet-editor", tab_behavior="indent")
        yield Static("", classes="snippet-output")

    def _highlighted(self) -> Syntax:
        return Syntax(self.code, "python", theme="ansi_dark", word_wrap=True,
                      background_color="default")

    def on_mount(self) -> None:
        self.query_one(".snippet-output").display = False  # no empty band before the first run
        self.query_one(SnippetEditor).display = False
        self._draw_title(self.state)

    def watch_state(self, state: str) -> None:
        if self.is_mounted:
            self._draw_title(state)

    def _draw_title(self, state: str) -> None:
        labels = {
            "idle": "▶ runnable snippet — Enter runs it · e: edit",
            "running": "running…",
            "done": "✓ ran — Enter runs it again · e: edit",
            "failed": "✗ failed — see the error below",
            "timeout": f"✗ stopped after {TIME_LIMIT_S:.0f} s",
            "truncated": "✗ stopped: too much output",
        }
        if self.editing:
            label = "editing — ctrl+s: run your version · escape: stop editing"
        else:
            label = labels[state]
        mark = " [b]· edited[/b] (x: original)" if self.edited else ""
        self.query_one(".snippet-title", Static).update(
            f"[b]Snippet {self.index + 1}[/b]  {label}{mark}")
        self.set_class(state in ("failed", "timeout"), "-failed")

    def check_action(self, action: str, parameters) -> bool | None:
        """While editing, enter types a line break and x a letter: Run, Edit and Original code
        leave the footer (ctrl+s runs the edited code, escape stops editing)."""
        if self.editing and action in ("run", "edit", "reset"):
            return False
        return True

    # -- editing ------------------------------------------------------------------------------
    def action_edit(self) -> None:
        editor = self.query_one(SnippetEditor)
        self.editing = True
        self.query_one(".snippet-code").display = False
        editor.display = True
        editor.focus()
        self._draw_title(self.state)
        self.screen.refresh_bindings()

    def stop_editing(self) -> None:
        editor = self.query_one(SnippetEditor)
        self.code = editor.text
        self.editing = False
        self.focus()  # before hiding the editor, so focus does not wander off to the lesson
        editor.display = False
        code_view = self.query_one(".snippet-code", Static)
        code_view.update(self._highlighted())
        code_view.display = True
        self.call_after_refresh(self.focus)
        self._draw_title(self.state)
        self.screen.refresh_bindings()

    def action_reset(self) -> None:
        if not self.edited and not self.editing:
            self.app.notify("This snippet is already the lesson's own code")
            return
        self.query_one(SnippetEditor).load_text(self.original)
        self.code = self.original
        if self.state != "running":  # the old run's verdict was about other code: no stale "failed"
            self.output_text = ""
            self.query_one(".snippet-output").display = False
            self.state = "idle"
        if self.editing:
            self.stop_editing()
        else:
            self.query_one(".snippet-code", Static).update(self._highlighted())
            self._draw_title(self.state)

    # -- running ------------------------------------------------------------------------------
    def action_run(self) -> None:
        self.run_code()

    def run_code(self) -> None:
        """Run what is on screen: the editor's text while editing, else the current code."""
        if self.editing:
            self.code = self.query_one(SnippetEditor).text
        if self.state == "running":
            return
        out = self.query_one(".snippet-output", Static)
        out.display = True
        try:  # served to a browser: only the lessons' own snippets run, unless the server allows
            serving_policy.check_code(self.code)
        except PolicyRefusal as e:
            out.update(Text(str(e)))
            self.state = "failed"
            self._draw_title(self.state)
            return
        self.state = "running"
        out.update("")
        self._draw_title(self.state)
        self._stop.clear()
        self._run(self.code)

    def on_unmount(self) -> None:
        self._stop.set()  # the learner left the lesson or quit: stop the snippet and what it started

    @dataclass
    class Ran(Result):
        """What the snippet printed, and how long it took (dropped if the lesson was left meanwhile)."""
        result: object
        took: float

    @background(thread=True, exclusive=True, group="snippet", what="Running the snippet")
    def _run(self, code: str) -> Ran:
        start = time.monotonic()
        result = run_snippet(code, timeout=TIME_LIMIT_S, stop=self._stop)
        return self.Ran(result, time.monotonic() - start)

    @on(Ran)
    def _show(self, message: Ran) -> None:
        result, took = message.result, message.took
        out = self.query_one(".snippet-output", Static)
        # Program output is shown, never interpreted: control characters made visible.
        if result.timed_out:
            self.output_text = (result.stdout + result.stderr).rstrip()
            out.update(Text(printable(f"{self.output_text[-MAX_SHOWN_CHARS:]}\n", keep="\n\t") +
                            f"stopped: ran longer than {TIME_LIMIT_S:.0f} s".lstrip()))
            self.state = "timeout"
            return
        text = (result.stdout + result.stderr).rstrip() or "(no output)"
        self.output_text = text[-MAX_SHOWN_CHARS:]
        footer = result.note if result.truncated else f"{took:.1f} s"
        out.update(Text(printable(self.output_text, keep="\n\t") + f"\n[{footer}]"))
        self.state = "truncated" if result.truncated else "done" if result.ok else "failed"
        self._draw_title(self.state)
