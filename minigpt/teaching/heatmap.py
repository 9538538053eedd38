"""Colour scales and glyph ramps for matrix heatmaps, as pure functions (no Textual here).

A cell's value becomes a signed *level*: the widget turns levels into theme colours, and the
glyph ramp prints the same level as a character, so the picture survives NO_COLOR and 16-colour
terminals (the number is always printed too; colour never carries meaning alone).

Sixteen colours cannot blend a hue with the background: every blend lands on the same few ANSI
colours, so weights from 0.23 to 0.67 would all look alike. There the widgets use ``ansi_shade``
(plain, coloured text, bright bold text, a filled cell, a bright filled cell) and print the glyph
ramp as well (``glyphs_needed``), which keeps every level apart.
"""

from __future__ import annotations

import math

# Diverging: levels -3..3 around 0. Unit (attention weights): levels 0..4 on a fixed 0–1 scale.
DIVERGING_GLYPHS = {-3: "▼", -2: "▽", -1: "▿", 0: "·", 1: "▵", 2: "△", 3: "▲"}
UNIT_GLYPHS = {0: " ", 1: "░", 2: "▒", 3: "▓", 4: "█"}
DIVERGING_MAX, UNIT_MAX = 3, 4


def diverging_level(value: float, vmax: float) -> int:
    """-3…3, centred at 0: the sign says which side, the size how far towards ±vmax."""
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return DIVERGING_MAX if value > 0 else -DIVERGING_MAX
    if vmax <= 0 or value == 0:
        return 0
    frac = min(1.0, abs(value) / vmax)
    level = max(1, math.ceil(frac * DIVERGING_MAX - 1e-9))
    return level if value > 0 else -level


def unit_level(value: float) -> int:
    """0…4 on a fixed 0–1 scale, so weights of different rows and stages compare directly."""
    if math.isnan(value) or value <= 0:
        return 0
    frac = min(1.0, value)
    return max(1, math.ceil(frac * UNIT_MAX - 1e-9))


def symmetric_max(values) -> float:
    """The scale's half-range: the largest finite |value| (1.0 for an all-zero matrix)."""
    finite = [abs(v) for v in values if not (math.isnan(v) or math.isinf(v))]
    m = max(finite, default=0.0)
    return m if m > 0 else 1.0


def glyph(level: int, scale: str) -> str:
    return (UNIT_GLYPHS if scale == "unit" else DIVERGING_GLYPHS)[level]


def half_block_rows(matrix, levels: int = UNIT_MAX) -> list[list[tuple[int, int]]]:
    """Pair rows (0,1), (2,3)… for half-block drawing: each cell is (upper level, lower level);
    a missing lower row (odd height) gets level -1."""
    rows = [[unit_level(float(v)) for v in row] for row in matrix]
    out = []
    for r in range(0, len(rows), 2):
        top = rows[r]
        bottom = rows[r + 1] if r + 1 < len(rows) else [-1] * len(top)
        out.append(list(zip(top, bottom)))
    return out


def legend(scale: str, vmax: float = 1.0) -> str:
    """One line naming what each glyph means."""
    if scale == "unit":
        return "0 " + "".join(UNIT_GLYPHS[i] for i in range(1, UNIT_MAX + 1)) + " 1 (fixed 0–1 scale)"
    lo, hi = DIVERGING_GLYPHS[-DIVERGING_MAX], DIVERGING_GLYPHS[DIVERGING_MAX]
    return f"{lo} −{vmax:.2f} … · 0 … {hi} +{vmax:.2f}"


# Shades a 16-colour terminal can tell apart, faintest first: no style, the hue as text, the bright
# hue as bold text, the hue as the cell's background, the bright hue as the background.
ANSI_SHADES = ("plain", "text", "bright text", "fill", "bright fill")


def ansi_shade(level: int, scale: str) -> str:
    """The 16-colour shade of a level: distinct for every |level| of either scale."""
    top = UNIT_MAX if scale == "unit" else DIVERGING_MAX
    size = min(abs(level), top)
    if size == 0:
        return "plain"
    # Spread the levels over the four non-plain shades, strongest always "bright fill".
    return ANSI_SHADES[max(1, round(size / top * (len(ANSI_SHADES) - 1)))]


def glyphs_needed(color_system: str | None, *, no_color: bool = False, ansi_theme: bool = False) -> bool:
    """Whether colour alone cannot show at least four levels apart, so the glyph ramp is printed.

    ``color_system`` is Rich's name for what the terminal can show ("truecolor", "256", "standard"
    for 16 colours, "windows", or None for none); ``ansi_theme`` says the theme itself is made of
    the 16 ANSI colours; ``no_color`` is the NO_COLOR convention.
    """
    return no_color or ansi_theme or color_system not in ("truecolor", "256")
