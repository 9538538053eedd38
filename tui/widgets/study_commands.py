"""A command-palette provider listing the current screen's own keys, so every study action
(reveal, rate, undo, export, a quiz mode...) can also be found by typing its name in ctrl+p."""

from __future__ import annotations

from functools import partial

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider


class ScreenKeysProvider(Provider):
    def _commands(self):
        screen = self.screen
        for b in screen.BINDINGS:
            if isinstance(b, tuple):
                b = Binding(*b)
            if not b.description or b.action.startswith("app."):
                continue
            if screen.check_action(b.action.split("(")[0], ()) is False:
                continue  # not available right now (e.g. rating before the answer is shown)
            key = b.key_display or b.key.split(",")[0]
            yield b.description, f"key {key}", partial(screen.run_action, b.action)

    async def discover(self) -> Hits:
        for text, help_text, run in self._commands():
            yield DiscoveryHit(text, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, help_text, run in self._commands():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), run, help=help_text)
