"""An Input whose ``max_length`` cuts a paste instead of refusing it, and says so.

Textual's Input refuses a paste that would pass ``max_length`` whole and silently: the learner
sees nothing happen. This one keeps the part that fits and posts ``Cut``, so the screen can say
what was dropped.
"""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import Input


class CappedInput(Input):
    class Cut(Message):
        """A paste was cut to fit: ``dropped`` characters were left out."""

        def __init__(self, field: CappedInput, dropped: int) -> None:
            super().__init__()
            self.field = field
            self.dropped = dropped

    def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()  # Input's own handler would refuse the whole paste
        if not event.text:
            return
        lines = event.text.splitlines()
        line = lines[0] if lines else ""  # one line, as Input keeps
        start, end = sorted(self.selection)
        room = max(0, self.max_length - (len(self.value) - (end - start))) if self.max_length else len(line)
        kept = line[:room]
        if kept:
            if start == end:
                self.insert_text_at_cursor(kept)
            else:
                self.replace(kept, start, end)
        if len(kept) < len(line):
            self.post_message(self.Cut(self, len(line) - len(kept)))
