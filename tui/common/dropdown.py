"""A dropdown list for the app's forms: enter or space opens it, and the footer says so.

Textual's Select opens on enter, space and the arrows but shows none of it; an open list is
drawn with a frame of its own and its options on one line each (tui/app.tcss), so a long
option never wraps over the widgets below it.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Select


class Dropdown(Select):
    BINDINGS = [Binding("enter,space", "show_overlay", "Open list", key_display="space", show=True, id="dropdown.show_overlay")]
