"""Command-palette entries for the training screens: each screen lists its own actions.

A screen sets ``COMMANDS = {ScreenActions}`` and defines ``palette_commands()`` returning
(title, help, callback) triples; only actions that make sense right now are listed.
"""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider


class ScreenActions(Provider):
    def _commands(self):
        screen = self.screen
        getter = getattr(screen, "palette_commands", None)
        return list(getter()) if getter is not None else []

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(callback), help=help_text)
