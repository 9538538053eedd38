"""Charts in the ANSI themes: the terminal's own colours for canvas, axes and ticks.

textual-plotext builds a chart's colours from the app theme's RGB values; an ANSI theme's
"default" colours have none, so its axes, ticks and title came out black on black. Importing this
module registers, under the names textual-plotext looks up for the ANSI themes, a plotext theme that
leaves canvas, axes and ticks to the terminal and draws series in distinct bright ANSI colours.
"""

from __future__ import annotations

from plotext._dict import themes

ANSI_SERIES = ["magenta+", "green+", "red+", "cyan+", "yellow+", "blue+", "white", "magenta", "green", "red"]

for _app_theme in ("ansi-dark", "ansi-light"):
    # textual-plotext registers "textual-auto-<app theme>" only when it is missing: this one stays.
    themes[f"textual-auto-{_app_theme}"] = ["default", "default", "default", "default", list(ANSI_SERIES)]
