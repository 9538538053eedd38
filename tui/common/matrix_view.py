"""A matrix as a grid of value-coloured cells: number in every cell, legend, cell cursor.

Colours come from the active theme (negative → $primary, positive → $error, weights → $accent),
blended with the background by a level from ``minigpt.teaching.heatmap``. Where colour cannot show
four levels apart (NO_COLOR, 16 colours, ansi themes) each level gets a distinct ANSI shade and the
glyph ramp is printed before the number, so nothing depends on colour alone. Arrow keys move the
cursor and post ``CursorMoved``.

Cells come in three widths: 3 decimals (8 columns), 2 decimals (7) and a tight 2-decimal form (6,
the selected cell marked by reverse video instead of brackets). With ``auto_fit`` the widest that
fits the space is used, so a 10-column attention map fits 80 columns; beyond that the explorer
scrolls sideways.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.color import Color
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from minigpt.teaching import heatmap
from minigpt.teaching.stepper import Panel, fmt, row_sums

LABEL_W = 6  # the widest row-label column (5 characters and a space)


ANSI_NAMES = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]
_STYLES: dict[tuple, Style] = {}  # (level, scale, theme, colour system) -> cell style: a stage has many cells


def rich_colour(c: Color) -> str:
    if c.ansi is not None:
        return ANSI_NAMES[c.ansi] if c.ansi < 8 else f"bright_{ANSI_NAMES[c.ansi - 8]}"
    return c.hex


def sixteen_colours(app) -> bool:
    """Whether colours reach the screen as the 16 ANSI ones (an ansi theme, or a 16-colour terminal)."""
    theme = app.current_theme
    ansi_theme = Color.parse(theme.accent or theme.primary or "#888888").ansi is not None
    return ansi_theme or app.console.color_system not in ("truecolor", "256")


def glyphs_wanted(app) -> bool:
    theme = app.current_theme
    return heatmap.glyphs_needed(app.console.color_system, no_color=app.no_color,
                                 ansi_theme=Color.parse(theme.accent or "#888888").ansi is not None)


def _nearest_ansi(c: Color) -> int:
    """The ANSI colour (0–7) nearest to a truecolour hue, for 16-colour terminals."""
    from rich.color import Color as RichColor
    from rich.color import ColorSystem

    return RichColor.from_rgb(c.r, c.g, c.b).downgrade(ColorSystem.STANDARD).number % 8


def ansi_style(shade: str, hue: Color) -> Style:
    """One of the five shades of ``minigpt.teaching.heatmap.ANSI_SHADES`` in the 16 ANSI colours."""
    base = hue.ansi % 8 if hue.ansi is not None else _nearest_ansi(hue)
    dark, bright = ANSI_NAMES[base], f"bright_{ANSI_NAMES[base]}"
    on_dark = "black" if base in (2, 3, 6, 7) else "bright_white"  # green, yellow, cyan, white are light
    return {
        "plain": Style(),
        "text": Style(color=dark),
        "bright text": Style(color=bright, bold=True),
        "fill": Style(bgcolor=dark, color=on_dark),
        "bright fill": Style(bgcolor=bright, color="black", bold=True),
    }[shade]


def cube_colour(hue: Color, fraction: float) -> str:
    """A shade of ``hue`` from the 256-colour cube, ``fraction`` of the way from black to it.

    Rich would map a truecolour blend to the nearest of the 256 colours, and the nearest of two
    close blends can be of another hue (a pale red becomes purple, a dark one brown): scaling the
    hue's own cube coordinates keeps every shade on one ramp."""
    top = max(hue.r, hue.g, hue.b, 1)
    r, g, b = (round(5 * fraction * c / top) for c in (hue.r, hue.g, hue.b))
    return f"color({16 + 36 * r + 6 * g + b})"


def cell_style(level: int, scale: str, theme, color_system: str | None) -> Style:
    """The style of a heatmap cell: one ramp per sign (positive in the theme's error hue, negative
    in its primary, the unit scale in its accent) in every colour system, from the background
    (level 0) to the full hue (the scale's top level)."""
    if level == 0:
        return Style()
    top = heatmap.UNIT_MAX if scale == "unit" else heatmap.DIVERGING_MAX
    hue = theme.accent if scale == "unit" else (theme.error if level > 0 else theme.primary)
    hue_c = Color.parse(hue or "#888888")
    if color_system not in ("truecolor", "256"):
        return ansi_style(heatmap.ansi_shade(level, scale), hue_c)
    fraction = 0.25 + 0.75 * min(abs(level), top) / top
    if color_system == "256":
        bg = cube_colour(hue_c, fraction)
        return Style(bgcolor=bg, color="black" if fraction > 0.6 else "bright_white")
    base = Color.parse(theme.background or "#1e1e1e")
    bg = base.blend(hue_c, fraction)
    return Style(bgcolor=bg.hex, color=bg.get_contrast_text(1.0).hex)


class MatrixView(Widget, can_focus=True):
    HELP_TITLE = "matrix"  # what help calls it: "In the focused matrix"
    BINDINGS = [
        Binding("up", "move(-1, 0)", "Cell ↑", show=False, id="matrix.up"),
        Binding("down", "move(1, 0)", "Cell ↓", show=False, id="matrix.down"),
        Binding("left", "move(0, -1)", "Cell ←", show=False, id="matrix.left"),
        Binding("right", "move(0, 1)", "Cell →", show=False, id="matrix.right"),
    ]

    cursor: reactive[tuple[int, int]] = reactive((0, 0))
    # None: decided by the terminal (on where colour cannot show four levels apart); the learner's
    # g key sets True or False.
    glyphs: reactive[bool | None] = reactive(None)

    class CursorMoved(Message):
        def __init__(self, view: MatrixView, row: int, col: int):
            super().__init__()
            self.view, self.row, self.col = view, row, col

    def __init__(self, panel: Panel | None = None, *, title: str = "", show_cursor: bool = True,
                 show_sums: bool = False, auto_fit: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.panel = panel
        self.title = title
        self.show_cursor = show_cursor
        self.show_sums = show_sums
        self.hidden = False  # predict-then-reveal: numbers shown as "?"
        self.error = ""
        self.placeholder = ""  # shown instead of the panel, which only sizes the widget (see set_panel)
        self.density = 0  # 0: 3 decimals; 1: 2 decimals; 2: 2 decimals in tight cells
        self._text_w = None  # (panel and decimals, widest number) cached for the width sums
        self.auto_fit = auto_fit  # pick the density from the space available

    @property
    def compact(self) -> bool:
        """Narrow screens: 2 decimals, narrower cells (the stepper sets it from its own layout)."""
        return self.density > 0

    @compact.setter
    def compact(self, value: bool) -> None:
        self.density = 1 if value else 0

    @property
    def show_glyphs(self) -> bool:
        """The glyph ramp is printed: asked for with g, or needed because colour cannot carry it."""
        if self.glyphs is not None:
            return self.glyphs
        return glyphs_wanted(self.app)

    # -- state ------------------------------------------------------------------------------------
    def set_panel(self, panel: Panel | None, *, title: str = "", show_sums: bool = False,
                  hidden: bool = False, error: str = "", placeholder: str = "") -> None:
        """Show ``panel``; with ``placeholder``, show that line instead, in the room the panel would
        take (a slot kept for a matrix still to come: filling it later lays nothing out again)."""
        before = self._size_key()
        self.panel, self.title, self.show_sums, self.hidden, self.error = panel, title, show_sums, hidden, error
        self.placeholder = placeholder
        if panel is not None and panel.values:
            r, c = self.cursor
            self.cursor = (min(r, len(panel.values) - 1), min(c, len(panel.values[0]) - 1))
        # A new layout only when the size changes: stepping through stages of one shape is a repaint.
        self.refresh(layout=self._size_key() != before)

    def _size_key(self) -> tuple:
        if not self.panel or not self.panel.values:
            return (None, self.title, bool(self.error))
        return (self._width(self.density), len(self.panel.values), bool(self.error))

    def value(self, row: int, col: int) -> float:
        return self.panel.values[row][col]

    def cell_text(self, row: int, col: int) -> str:
        """What the learner reads in a cell (tests compare it with the library's numbers)."""
        return "?" if self.hidden else fmt(self.value(row, col), self.decimals)

    @property
    def decimals(self) -> int:
        return 2 if self.density else 3

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
        return self._cell_w(self.density)

    def _cell_w(self, density: int) -> int:
        # " 0.124 " or "[0.124]" when selected; tight: " 0.12" with the selection in reverse video.
        # As wide as the widest number needs (weights have no minus sign), at least 6 + 2.
        decimals = 2 if density else 3
        key = (id(self.panel), decimals)
        if self._text_w is None or self._text_w[0] != key:
            widths = [len(fmt(v, decimals)) for row in self.panel.values for v in row] if self.panel else []
            self._text_w = (key, max(widths, default=4))
        text = max(self._text_w[1], 4 if density else 6)
        return text + (1 if self.show_glyphs else 0) + (1 if density == 2 else 2)

    def _width(self, density: int) -> int:
        if not self.panel or not self.panel.values:
            return max(20, len(self.title))
        cols = len(self.panel.values[0])
        grid = self.label_w + cols * self._cell_w(density) + (8 if self.show_sums else 0)
        return max(grid, min(len(self._legend()), 40), min(len(self._header()), 40))

    @property
    def label_w(self) -> int:
        """As wide as the longest row label needs (short labels leave room for one more column)."""
        if not self.panel or not self.panel.row_labels:
            return LABEL_W
        return min(LABEL_W, max(len(label) for label in self.panel.row_labels) + 1)

    def _fit_to(self, width: int) -> None:
        """The widest cells that fit ``width`` columns (the tightest when none does)."""
        self.density = next((d for d in (0, 1, 2) if self._width(d) <= width), 2)

    def get_content_width(self, container, viewport) -> int:
        if self.auto_fit and container is not None:
            self._fit_to(container.width)
        return self._width(self.density)

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
        key = (level, self.panel.scale, self.app.theme, self.app.console.color_system)
        style = _STYLES.get(key)
        if style is None:
            style = _STYLES[key] = self._make_style(level)
        return style

    def _make_style(self, level: int) -> Style:
        return cell_style(level, self.panel.scale, self.app.current_theme,
                          "standard" if sixteen_colours(self.app) else self.app.console.color_system)

    def render(self) -> Text:
        if self.auto_fit and self.size.width:
            self._fit_to(self.size.width)
        out = Text()
        if self.placeholder:
            return Text(self.placeholder, style="dim")
        out.append(self._header() + "\n", style="bold")
        if not self.panel or not self.panel.values:
            return out
        p, cw = self.panel, self.cell_w
        tight = self.density == 2
        pad = 1 if tight else 2  # the columns around a cell's text: " x " or, tight, " x"
        glyphs = self.show_glyphs
        lw = self.label_w
        out.append(" " * lw + "".join(" " + c[: cw - pad].rjust(cw - pad) + ("" if tight else " ")
                                           for c in p.col_labels), style="dim")
        if self.show_sums:
            out.append("      Σ", style="dim")
        out.append("\n")
        vmax = self._vmax()
        sums = row_sums(p.values)
        for i, row in enumerate(p.values):
            out.append(p.row_labels[i][: lw - 1].ljust(lw), style="dim")
            for j, v in enumerate(row):
                level = self._level(v, vmax)
                text = self.cell_text(i, j)
                if glyphs:
                    text = ("" if self.hidden else heatmap.glyph(level, p.scale)) + text
                style = Style() if self.hidden else self._style(level)
                selected = self.show_cursor and (i, j) == self.cursor
                if selected:
                    style = style + Style(reverse=True, underline=True)
                if tight:
                    out.append(" ")
                    out.append(text.rjust(cw - pad), style=style)
                    continue
                out.append("[" if selected else " ", style="bold")
                out.append(text.rjust(cw - pad), style=style)
                out.append("]" if selected else " ", style="bold")
            if self.show_sums:
                out.append(" Σ" + ("?" if self.hidden else fmt(sums[i], 3)).rjust(6))
            out.append("\n")
        if self.error:
            out.append(self.error + "\n", style="bold")
        out.append(self._legend(), style="dim")
        return out
