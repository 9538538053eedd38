"""Heatmaps keep their levels apart where colour runs out: 16 colours, ansi themes, NO_COLOR.

The issue's case: attention weights from 0.226 to 0.670 all rendered as one yellow in 16 colours.
Each cell is rendered, its colours reduced to what a 16-colour terminal shows, and the distinct
looks (glyph + colours + weight) are counted.
"""

from __future__ import annotations

import pytest
from rich.color import ColorSystem
from textual.app import App

from minigpt.teaching import heatmap
from minigpt.teaching.stepper import Panel
from tui.common.matrix_view import MatrixView
from tui.explorers.attention_grid import AttentionGrid

WEIGHTS = [[0.0, 0.226, 0.41, 0.670, 0.93]]  # 0, then one weight in each of the four unit levels


class Host(App):
    def __init__(self, theme: str = "textual-dark"):
        super().__init__()
        self._theme_name = theme

    def compose(self):
        yield MatrixView(Panel("A", WEIGHTS, "unit", ["q"], [f"k{j}" for j in range(5)]), show_cursor=False)

    def on_mount(self):
        self.theme = self._theme_name


def looks(view: MatrixView) -> list[tuple]:
    """How each cell of row 0 reaches a 16-colour terminal: (its glyph, foreground, background, bold)."""
    text = view.render()
    row = text.plain.split("\n")[2]
    cells = []
    for j, _v in enumerate(WEIGHTS[0]):
        number = view.cell_text(0, j)
        start = row.index(number, sum(len(c[4]) for c in cells) if cells else 0)
        glyph = row[start - 1] if view.show_glyphs else ""
        style = text.get_style_at_offset(view.app.console, len(text.plain.split("\n")[0]) + 1
                                         + len(text.plain.split("\n")[1]) + 1 + start)
        fg = style.color.downgrade(ColorSystem.STANDARD).number if style.color else None
        bg = style.bgcolor.downgrade(ColorSystem.STANDARD).number if style.bgcolor else None
        cells.append((glyph, fg, bg, bool(style.bold), number))
    return [c[:4] for c in cells]


@pytest.mark.parametrize("theme", ["ansi-dark", "textual-dark"])
async def test_sixteen_colours_keep_every_level_apart(monkeypatch, theme):
    monkeypatch.setenv("TERM", "xterm-16color")
    monkeypatch.delenv("COLORTERM", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    app = Host(theme)
    async with app.run_test(size=(80, 10)) as pilot:
        await pilot.pause()
        view = app.query_one(MatrixView)
        assert app.console.color_system == "standard"
        assert view.show_glyphs  # colour alone cannot carry the levels here
        cells = looks(view)
        assert len(set(cells)) == len(cells) >= 5  # 0 and four levels, all different
        assert cells[1] != cells[3]  # 0.226 and 0.670: the one yellow


async def test_true_colour_needs_no_glyphs(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLORTERM", "truecolor")
    monkeypatch.delenv("NO_COLOR", raising=False)
    app = Host()
    async with app.run_test(size=(80, 10)) as pilot:
        await pilot.pause()
        view = app.query_one(MatrixView)
        assert not view.show_glyphs
        view.glyphs = True  # g still turns the ramp on
        assert view.show_glyphs and "▓" in view.render().plain


def test_ansi_shades_and_glyph_rules():
    unit = [heatmap.ansi_shade(level, "unit") for level in range(5)]
    assert unit == ["plain", "text", "bright text", "fill", "bright fill"]
    diverging = {heatmap.ansi_shade(level, "diverging") for level in (1, 2, 3)}
    assert len(diverging) == 3 and "plain" not in diverging
    assert heatmap.glyphs_needed("standard") and heatmap.glyphs_needed(None)
    assert heatmap.glyphs_needed("truecolor", no_color=True) and heatmap.glyphs_needed("256", ansi_theme=True)
    assert not heatmap.glyphs_needed("256") and not heatmap.glyphs_needed("truecolor")


class GridHost(App):
    def compose(self):
        yield AttentionGrid()


async def test_attention_grid_wraps_heads_and_uses_glyphs_in_16_colours(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-16color")
    monkeypatch.delenv("COLORTERM", raising=False)
    app = GridHost()
    async with app.run_test(size=(40, 30)) as pilot:
        grid = app.query_one(AttentionGrid)
        T = 10
        head = [[1.0 / (i + 1) if j <= i else 0.0 for j in range(T)] for i in range(T)]
        grid.set_maps([[head] * 4])  # one layer, four heads of 12 columns: 3 fit 40 columns
        await pilot.pause()
        lines = grid.render().plain.split("\n")
        assert "L0H0" in lines[0] and "L0H2" in lines[0] and "L0H3" not in lines[0]
        assert grid.show_glyphs and lines[1].strip().startswith("█")  # row 0 attends to itself only
        assert any("L0H3" in line for line in lines[1:])
        assert max(len(line.rstrip()) for line in lines) <= 40


@pytest.mark.parametrize("color_system", ["truecolor", "256", "standard"])
@pytest.mark.parametrize("sign", [1, -1])
def test_each_sign_is_one_ramp_in_every_colour_system(color_system, sign):
    """Stronger values only get stronger, never change hue: in 256 colours a blend used to map to
    purple for small positives and brown-red for larger ones."""
    import colorsys

    from rich.color import Color as RichColor
    from textual.theme import BUILTIN_THEMES

    from minigpt.teaching import heatmap
    from tui.common.matrix_view import cell_style

    theme = BUILTIN_THEMES["textual-dark"]
    styles = [cell_style(sign * level, "diverging", theme, color_system)
              for level in range(1, heatmap.DIVERGING_MAX + 1)]
    if color_system == "standard":
        names = {str(s.bgcolor.name if s.bgcolor else s.color.name).removeprefix("bright_") for s in styles}
        assert len(names) == 1, names  # one ANSI colour, in shades
        return
    from rich.color import ColorSystem

    shown = [s.bgcolor.downgrade(ColorSystem.EIGHT_BIT) if color_system == "256" else s.bgcolor
             for s in styles]  # what a 256-colour terminal gets: Rich maps to the nearest entry
    rgbs = [c.get_truecolor() for c in shown]
    hsv = [colorsys.rgb_to_hsv(*(c / 255 for c in rgb)) for rgb in rgbs]
    values = [v for _, _, v in hsv]
    assert values == sorted(values) and values[0] < values[-1]  # darker to brighter
    hues = [h for h, sat, _ in hsv if sat > 0.2]
    spread = max(hues) - min(hues) if hues else 0
    assert min(spread, 1 - spread) < 0.06, (color_system, rgbs)  # one hue (within about 20°)
    assert all(isinstance(s.bgcolor, RichColor) for s in styles)
