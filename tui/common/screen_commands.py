"""One command-palette provider for every screen: its own actions, found by typing their names.

A screen may define ``palette_commands()`` returning (title, help, callback) triples for actions
that depend on its state. Otherwise every described key binding of the screen becomes a command
("Playground: Regenerate"), skipping those ``check_action`` says are unavailable right now.
``PALETTE_PREFIX`` names the screen in the titles (default: the class name in words, "Study stats":
the palette never shows a class name).
"""

from __future__ import annotations

import re
from functools import partial

from textual.binding import Binding
from textual.command import Hit, Hits, Provider

from tui.keymap import shown_key


def screen_name(screen) -> str:
    """A screen (or its class) in the learner's words: its ``PALETTE_PREFIX``, else its class name
    split into words ("StudyStatsScreen" → "Study stats")."""
    cls = screen if isinstance(screen, type) else type(screen)
    explicit = getattr(cls, "PALETTE_PREFIX", None)
    if explicit:
        return explicit
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", cls.__name__.removesuffix("Screen")).lower().capitalize()


def screen_commands(screen) -> list[tuple[str, str, object]]:
    custom = getattr(screen, "palette_commands", None)
    if custom is not None:
        return list(custom())
    prefix = screen_name(screen)
    commands, seen = [], set()
    for b in screen.BINDINGS:
        if isinstance(b, tuple):
            b = Binding(*b)
        if not b.description or b.action in seen or b.action.startswith("app."):
            continue
        if screen.check_action(b.action.split("(")[0], ()) is False:
            continue  # not available right now (e.g. rating before the answer is shown)
        seen.add(b.action)
        key = shown_key(screen.app, b)  # the learner's key, if the settings remap this binding
        commands.append((f"{prefix}: {b.description}", f"key {key}", partial(screen.run_action, b.action)))
    return commands


class ScreenCommands(Provider):
    async def discover(self) -> Hits:
        """The empty palette leads with this screen's actions: scored hits sort above the
        app-wide discovery list (areas, lessons, explorers), which Textual scores 0."""
        commands = screen_commands(self.screen)
        for i, (title, help_text, callback) in enumerate(commands):
            yield Hit(1.0 - i / (len(commands) + 1) / 2, title, callback, text=title, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in screen_commands(self.screen):
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
