"""Keep the screen when the progress database refuses a write (busy, read-only, full, damaged).

Textual stops a screen's message loop after any exception in one of its handlers, so an error
from SQLite would leave a dead screen behind. Handlers that write progress are decorated with
:func:`keeps_screen`: the learner sees why nothing was saved, the screen stays exactly as it was
(the card still shown, the answer still there), and doing the same again retries.
"""

from __future__ import annotations

import functools
import inspect
import sqlite3
import time

from minigpt.errors import StoreError
from minigpt.text import markup_escape

_REPEAT_S = 5.0  # the same message again within this time is not shown twice (scrolling saves)
_last: dict[str, float] = {}
_told: set[str] = set()  # the time-zone warning, said once per process


def tell(widget, error: Exception) -> None:
    """Notify ``widget``'s app that nothing was saved, and why (once per few seconds)."""
    message = str(error) if isinstance(error, StoreError) else f"the progress database failed: {error}"
    now = time.monotonic()
    if now - _last.get(message, -_REPEAT_S) < _REPEAT_S:
        return
    _last[message] = now
    widget.notify(markup_escape(message), title="Not saved", severity="error", timeout=12)


def tell_study_notes(widget) -> None:
    """Say what reading the progress worked around, each thing once: rows left out as unreadable
    (``minigpt.study.rows``), a machine time zone replaced by UTC (``minigpt.study.days``)."""
    from minigpt.skipped_rows import take_skipped_note
    from minigpt.study import days

    skipped = take_skipped_note()
    if skipped:
        widget.notify(markup_escape(skipped), title="Progress", severity="warning", timeout=20)
    zone = days.zone_warning()
    if zone and zone not in _told:
        _told.add(zone)
        widget.notify(markup_escape(zone), title="Time zone", severity="warning", timeout=20)


def keeps_screen(handler):
    """Decorate a handler (sync or async) that writes progress: SQLite failures become a notice."""
    if inspect.iscoroutinefunction(handler):
        @functools.wraps(handler)
        async def guarded_async(self, *args, **kwargs):
            try:
                return await handler(self, *args, **kwargs)
            except (StoreError, sqlite3.Error) as e:
                tell(self, e)
        return guarded_async

    @functools.wraps(handler)
    def guarded(self, *args, **kwargs):
        try:
            return handler(self, *args, **kwargs)
        except (StoreError, sqlite3.Error) as e:
            tell(self, e)
    return guarded
