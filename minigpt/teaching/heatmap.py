"""Colour scales and glyph ramps for matrix heatmaps, as pure functions (no Textual here).

A cell's value becomes a signed *level*: the widget turns levels into theme colours, and the
glyph ramp prints the same level as a character, so the picture survives NO_COLOR and 16-colour
terminals (the number is always printed too; colour never carries meaning alone).
"""

from __future__ import annotations

import math

# Diverging: levels -3..3 around 0. Unit (attention weights): levels 0..4 on a fixed 0–1 scale.
DIVERGING_GLYPHS = {-3: "▼", -2: "▽", -1: "-", 0: "·", 1: "+", 2: "△", 3: "▲"}
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
