"""A matrix as a grid of value-coloured cells: number in every cell, legend, cell cursor.

Colours come from the active theme (negative → $primary, positive → $error, weights → $accent),
blended with the background by a level from ``minigpt.teaching.heatmap``. ansi themes get a few discrete
ANSI shades. The same level can be printed as a glyph (on by default under NO_COLOR), so
nothing depends on colour alone. Arrow keys move the cursor and post ``CursorMoved``.
"""

from __future__ import annotations

import os

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.color import Color
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from minigpt.teaching import heatmap
from minigpt.teaching.stepper import Panel, fmt, row_sums

LABEL_W = 6


def rich_colour(c: Color) -> str:
    if c.ansi is not None:
        names = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]
        return names[c.ansi] if c.ansi < 8 else f"bright_{names[c.ansi - 8]}"
    return c.hex


class MatrixView(Widget, can_focus=True):
    BINDINGS = [
        Binding("up", "move(-1, 0)", "Cell ↑", show=False),
        Binding("down", "move(1, 0)", "Cell ↓", show=False),
        Binding("left", "move(0, -1)", "Cell ←", show=False),
        Binding("right", "move(0, 1)", "Cell →", show=False),
    ]

    cursor: reactive[tuple[int, int]] = reactive((0, 0))
    glyphs: reactive[bool] = reactive(bool(os.environ.get("NO_COLOR")))

    class CursorMoved(Message):
        def __init__(self, view: "MatrixView", row: int, col: int):
            super().__init__()
            self.view, self.row, self.col = view, row, col

    def __init__(self, panel: Panel | None = None, *, title: str = "", show_cursor: bool = True,
                 show_sums: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.panel = panel
        self.title = title
        self.show_cursor = show_cursor
        self.show_sums = show_sums
        self.hidden = False  # predict-then-reveal: numbers shown as "?"
        self.error = ""
        self.compact = False  # narrow screens: 2 decimals, narrower cells

    # -- state ------------------------------------------------------------------------------------
    def set_panel(self, panel: Panel | None, *, title: str = "", show_sums: bool = False,
                  hidden: bool = False, error: str = "") -> None:
        self.panel, self.title, self.show_sums, self.hidden, self.error = panel, title, show_sums, hidden, error
        if panel is not None and panel.values:
            r, c = self.cursor
            self.cursor = (min(r, len(panel.values) - 1), min(c, len(panel.values[0]) - 1))
        self.refresh(layout=True)

    def value(self, row: int, col: int) -> float:
        return self.panel.values[row][col]

    def cell_text(self, row: int, col: int) -> str:
        """What the learner reads in a cell (tests compare it with the library's numbers)."""
        return "?" if self.hidden else fmt(self.value(row, col), self.decimals)

    @property
    def decimals(self) -> int:
        return 2 if self.compact else 3

    def action_move(self, dr: int, dc: int) -> None:
        if not self.panel or not self.panel.values:
            return
        r, c = self.cursor
        rows, cols = len(self.panel.values), len(self.panel.values[0])
        self.cursor = ((r + dr) % rows, (c + dc) % cols)

    def watch_cursor(self, cursor: tuple[int, int]) -> None:
        self.post_message(self.CursorMoved(self, *cursor))
        self.refresh()

    def watch_glyphs(self) -> None:
        self.refresh(layout=True)

    # -- drawing ----------------------------------------------------------------------------------
    @property
    def cell_w(self) -> int:
        # " 0.124 " or "[0.124]" when selected
        return (7 if self.compact else 8) + (1 if self.glyphs else 0)

    def get_content_width(self, container, viewport) -> int:
        if not self.panel or not self.panel.values:
            return max(20, len(self.title))
        cols = len(self.panel.values[0])
        grid = LABEL_W + cols * self.cell_w + (8 if self.show_sums else 0)
        return max(grid, min(len(self._legend()), 60), len(self._header()))

    def get_content_height(self, container, viewport, width) -> int:
        if not self.panel or not self.panel.values:
            return 2
        return 3 + len(self.panel.values) + (1 if self.error else 0)

    def _header(self) -> str:
        if not self.panel:
            return self.title
        return f"{self.panel.name}  {self.panel.shape}" + (f"  {self.title}" if self.title else "")

    def _vmax(self) -> float:
        return heatmap.symmetric_max(v for row in self.panel.values for v in row)

    def _legend(self) -> str:
        if not self.panel:
            return ""
        return heatmap.legend(self.panel.scale, self._vmax())

    def _level(self, v: float, vmax: float) -> int:
        if self.panel.scale == "unit":
            return heatmap.unit_level(v)
        return heatmap.diverging_level(v, vmax)

    def _style(self, level: int) -> Style:
        theme = self.app.current_theme
        if level == 0:
            return Style()
        top = heatmap.UNIT_MAX if self.panel.scale == "unit" else heatmap.DIVERGING_MAX
        hue = theme.accent if self.panel.scale == "unit" else (theme.error if level > 0 else theme.primary)
        hue_c = Color.parse(hue or "#888888")
        frac = abs(level) / top
        if hue_c.ansi is not None:  # 16-colour themes: a coloured number, then a coloured cell
            if frac > 0.5:
                return Style(bgcolor=rich_colour(hue_c), color="bright_white", bold=True)
            return Style(color=rich_colour(hue_c), bold=True)
        base = Color.parse(theme.background or "#1e1e1e")
        bg = base.blend(hue_c, 0.25 + 0.75 * frac)
        return Style(bgcolor=bg.hex, color=bg.get_contrast_text(1.0).hex)

    def render(self) -> Text:
        out = Text()
        out.append(self._header() + "\n", style="bold")
        if not self.panel or not self.panel.values:
            return out
        p, cw = self.panel, self.cell_w
        out.append(" " * LABEL_W + "".join(" " + c[: cw - 2].rjust(cw - 2) + " " for c in p.col_labels), style="dim")
        if self.show_sums:
            out.append("      Σ", style="dim")
        out.append("\n")
        vmax = self._vmax()
        sums = row_sums(p.values)
        for i, row in enumerate(p.values):
            out.append(p.row_labels[i][: LABEL_W - 1].ljust(LABEL_W), style="dim")
            for j, v in enumerate(row):
                level = self._level(v, vmax)
                text = self.cell_text(i, j)
                if self.glyphs:
                    text = ("" if self.hidden else heatmap.glyph(level, p.scale)) + text
                style = Style() if self.hidden else self._style(level)
                selected = self.show_cursor and (i, j) == self.cursor
                if selected:
                    style = style + Style(reverse=True, underline=True)
                out.append("[" if selected else " ", style="bold")
                out.append(text.rjust(cw - 2), style=style)
                out.append("]" if selected else " ", style="bold")
            if self.show_sums:
                out.append(" Σ" + ("?" if self.hidden else fmt(sums[i], 3)).rjust(6))
            out.append("\n")
        if self.error:
            out.append(self.error + "\n", style="bold")
        out.append(self._legend(), style="dim")
        return out
