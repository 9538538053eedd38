"""The plot theme's one use of plotext's private theme table, pinned: a plotext that changes it fails here."""

from __future__ import annotations

import re

import plotext as plt

from tui.common import plot_theme

COLOUR_CODES = re.compile(r"\x1b\[([0-9;]*)m")


def _codes_of_a_chart(theme: str) -> set[str]:
    plt.clear_figure()
    plt.theme(theme)  # through plotext's public API: the name must reach the registered entry
    plt.plotsize(30, 8)
    plt.plot([1, 2, 3], [1, 3, 2])
    try:
        return set(COLOUR_CODES.findall(plt.build()))
    finally:
        plt.clear_figure()


def test_the_ansi_themes_are_registered_in_the_table_plotext_reads():
    assert plot_theme.ANSI_THEMES_REGISTERED, "plotext no longer keeps its themes in plotext._dict.themes as a 5-field list"


def test_a_registered_theme_leaves_canvas_axes_and_ticks_to_the_terminal():
    codes = _codes_of_a_chart("textual-auto-ansi-dark")
    assert not any(code.startswith("48;") for code in codes), codes  # no background: the terminal's own
    assert "38;5;13" in codes, codes  # the first series in magenta+ (ANSI 13), the theme's first colour
    assert "38;5;0" not in codes  # no black axes or ticks


def test_plotexts_own_theme_draws_differently_so_the_check_above_can_fail():
    codes = _codes_of_a_chart("default")
    assert any(code.startswith("48;") for code in codes)


def test_a_table_of_another_shape_is_refused_not_written(monkeypatch):
    import plotext._dict

    monkeypatch.setattr(plotext._dict, "themes", {"default": ["white", "black"]})
    assert not plot_theme.register_plotext_theme("x", "default", "default", "default", "default", ["red"])
    assert "x" not in plotext._dict.themes
