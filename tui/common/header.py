"""The screens' header: Textual's ``Header``, safe when its screen closes before the title is drawn.

Textual's ``Header`` watches the app's and the screen's titles and writes them into its
``HeaderTitle`` child. On a busy machine a screen can be opened and closed before that first write
runs; the child is gone by then and the write raises ``NoMatches``, which Textual does not catch
(only ``NoScreen``), so the whole app ended. This header makes the same watchers and ignores a
title child that is no longer there.
"""

from __future__ import annotations

from textual.css.query import NoMatches
from textual.events import Mount
from textual.widget import NoScreen
from textual.widgets import Header
from textual.widgets._header import HeaderTitle  # the child Header itself writes the title into


class TutorHeader(Header):
    def _on_mount(self, event: Mount) -> None:
        event.prevent_default()  # Header's own watchers would not survive the early close

        async def set_title() -> None:
            try:
                self.query_one(HeaderTitle).update(self.format_title())
            except (NoScreen, NoMatches):  # the screen is closing: nothing to draw into
                pass

        for source in (self.app, self.screen):
            self.watch(source, "title", set_title)
            self.watch(source, "sub_title", set_title)
