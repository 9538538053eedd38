"""A runnable code block: shows the code; Enter (or r) runs it in a subprocess with a time limit."""

from __future__ import annotations

import asyncio
import time

from rich.syntax import Syntax
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Static

from minigpt import serving_policy
from minigpt.lessons import snippet_command, snippet_env
from tui.workers import run_guarded

TIME_LIMIT_S = 20.0


class SnippetBlock(Vertical, can_focus=True):
    BINDINGS = [Binding("enter,r", "run", "Run", show=True)]

    state = reactive("idle")  # idle | running | done | failed | timeout

    def __init__(self, code: str, index: int, **kwargs):
        super().__init__(classes="snippet", **kwargs)
        self.code = code
        self.index = index
        self.output_text = ""

    def compose(self) -> ComposeResult:
        yield Static(id="snippet-title", classes="snippet-title")
        yield Static(Syntax(self.code, "python", theme="ansi_dark", word_wrap=True,
                            background_color="default"), classes="snippet-code")
        yield Static("", classes="snippet-output")

    def on_mount(self) -> None:
        self.query_one(".snippet-output").display = False  # no empty band before the first run
        self.watch_state(self.state)

    def watch_state(self, state: str) -> None:
        labels = {
            "idle": "▶ runnable snippet — press Enter to run",
            "running": "… running",
            "done": "✓ ran — Enter runs it again",
            "failed": "✗ failed — see the error below",
            "timeout": f"✗ stopped after {TIME_LIMIT_S:.0f} s",
        }
        if self.is_mounted:
            self.query_one(".snippet-title", Static).update(f"[b]Snippet {self.index + 1}[/b]  {labels[state]}")
            self.set_class(state in ("failed", "timeout"), "-failed")

    def action_run(self) -> None:
        if self.state != "running":
            run_guarded(self, self._run(), what="Running the snippet", exclusive=True,
                        group=f"snippet-{self.index}")

    async def _run(self) -> None:
        out = self.query_one(".snippet-output", Static)
        out.display = True
        try:
            serving_policy.check_code(self.code)  # served to a browser: lesson snippets only, as written
        except serving_policy.PolicyRefusal as e:
            from rich.text import Text

            out.update(Text(str(e)))
            self.state = "failed"
            return
        self.state = "running"
        out.update("")
        start = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            *snippet_command(self.code), stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, stdin=asyncio.subprocess.DEVNULL, env=snippet_env(),
        )
        try:
            data, _ = await asyncio.wait_for(proc.communicate(), TIME_LIMIT_S)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
            self.state = "timeout"
            out.update(f"stopped: ran longer than {TIME_LIMIT_S:.0f} s")
            return
        text = data.decode("utf-8", "replace").rstrip() or "(no output)"
        self.output_text = text
        took = time.monotonic() - start
        from rich.text import Text

        out.update(Text(f"{text}\n[{took:.1f} s]"))
        self.state = "done" if proc.returncode == 0 else "failed"
