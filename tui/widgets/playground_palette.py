"""Command-palette entries for the playground screens: every described key binding of the screen
becomes a palette command ("Playground: Regenerate"…), so nothing is reachable by key alone."""

from __future__ import annotations

from functools import partial

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider


class ScreenBindingCommands(Provider):
    """Lists the active screen's bindings; the screen sets ``PALETTE_PREFIX`` to name itself."""

    def _commands(self):
        screen = self.screen
        prefix = getattr(screen, "PALETTE_PREFIX", screen.__class__.__name__)
        seen = set()
        for b in screen.BINDINGS:
            if isinstance(b, tuple):
                b = Binding(*b)
            if not b.description or b.action in seen or b.action.startswith("app."):
                continue
            seen.add(b.action)
            key = b.key_display or b.key.split(",")[0]
            yield f"{prefix}: {b.description}", f"key {key}", partial(screen.run_action, b.action)

    async def discover(self) -> Hits:
        for text, help_text, callback in self._commands():
            yield DiscoveryHit(text, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, help_text, callback in self._commands():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), callback, help=help_text)
