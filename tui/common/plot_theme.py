"""Charts in the ANSI themes: the terminal's own colours for canvas, axes and ticks.

textual-plotext builds a chart's colours from the app theme's RGB values; an ANSI theme's
"default" colours have none, so its axes, ticks and title came out black on black. Importing this
module registers, under the names textual-plotext looks up for the ANSI themes, a plotext theme that
leaves canvas, axes and ticks to the terminal and draws series in distinct bright ANSI colours.

plotext has no public way to add a theme (textual-plotext itself writes into the same private
table), so the private table is touched in one place, :func:`register_plotext_theme`, whose
expectations tests/test_plot_theme.py pins: a plotext release that moves or reshapes it fails there.
"""

from __future__ import annotations

ANSI_SERIES = ["magenta+", "green+", "red+", "cyan+", "yellow+", "blue+", "white", "magenta", "green", "red"]

# plotext's theme entry: [canvas, axes, ticks, style, series colours], as plotext._dict.themes holds it.
THEME_FIELDS = 5


def register_plotext_theme(name: str, canvas: str, axes: str, ticks: str, style: str, series: list[str]) -> bool:
    """Add (or replace) a plotext theme by name; False, and charts keep plotext's colours, when the
    plotext installed no longer keeps its themes where and as this expects."""
    try:
        from plotext._dict import themes
    except ImportError:
        return False
    default = themes.get("default") if isinstance(themes, dict) else None
    if not (isinstance(default, list) and len(default) == THEME_FIELDS and isinstance(default[-1], list)):
        return False
    themes[name] = [canvas, axes, ticks, style, list(series)]
    return True


# textual-plotext registers "textual-auto-<app theme>" only when it is missing: these stay.
ANSI_THEMES_REGISTERED = all([register_plotext_theme(f"textual-auto-{app_theme}", "default", "default", "default",
                                                     "default", ANSI_SERIES)
                              for app_theme in ("ansi-dark", "ansi-light")])
