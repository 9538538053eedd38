"""The training panel's inside views, drawn from what the trainer wrote into the run folder
(``minigpt.runs.insight``): the surprise of a few validation items, characters shaded by −ln p,
and the layer health of each weight matrix (update size against its optimizer's band)."""

from __future__ import annotations

import math

from rich.color import Color
from rich.style import Style
from rich.text import Text

from minigpt.runs.insight import LayerHealth, Surprise, short_layer_name
from minigpt.text import printable
from minigpt.text_chart import spark

SHADES = 6  # steps of shading between "certain" and "as unsure as a uniform guess"


def shade(nll: float, uniform: float) -> Style:
    """Darker for expected characters, brighter red the closer −ln p comes to a uniform guess."""
    level = min(SHADES, int(SHADES * max(nll, 0.0) / max(uniform, 1e-9)))
    f = level / SHADES
    return Style(bgcolor=Color.from_rgb(int(40 + 200 * f), int(40 + 40 * (1 - f)), 40), color="white")


def surprise_text(surprise: Surprise | None, cursor: tuple[int, int], uniform: float | None,
                  step: int | None = None) -> Text:
    """Each item on a line, each character shaded; the cursor's character underlined and its
    number spelt out below. ``step``: show the last evaluation at or before it."""
    out = Text()
    got = surprise.at(step) if surprise is not None else None
    if got is None:
        out.append("Surprise", style="bold")
        out.append("\nafter the first evaluation" if surprise is not None else "\nnot recorded for this run",
                   style="dim")
        return out
    at, nll = got
    uniform = uniform or max(max(row, default=1.0) for row in nll)
    out.append("Surprise", style="bold")
    out.append(f" at step {at}\n", style="dim")
    out.append("  ")  # the legend: the shades from certain (−ln p 0) to a uniform guess's −ln p
    for level in range(SHADES + 1):
        out.append(" ", style=shade(uniform * level / SHADES, uniform))
    out.append(f" −ln p 0 → {uniform:.2f}\n", style="dim")
    item, pos = cursor
    for i, (chars, row) in enumerate(zip(surprise.chars, nll, strict=True)):
        out.append("  ")
        for j, (c, v) in enumerate(zip(chars, row, strict=True)):
            style = shade(v, uniform)
            if (i, j) == (item, pos):
                style += Style(underline=True, bold=True, reverse=True)
            out.append(printable(c) or "?", style=style)
        out.append("\n")
    if item < len(nll) and pos < len(nll[item]):
        v, c = nll[item][pos], printable(surprise.chars[item][pos])
        out.append(f"'{c}' −ln p {v:.2f} (p {math.exp(-v):.2f})", style="bold")
        out.append("\n←/→ move, ↑/↓ item" if len(surprise.chars) > 1 else "\n←/→ move", style="dim")
    return out


def move_cursor(surprise: Surprise | None, cursor: tuple[int, int], d_item: int, d_pos: int) -> tuple[int, int]:
    if surprise is None or not surprise.chars:
        return (0, 0)
    item = min(max(cursor[0] + d_item, 0), len(surprise.chars) - 1)
    pos = min(max(cursor[1] + d_pos, 0), len(surprise.chars[item]) - 1)
    return (item, pos)


def compact_layer_name(name: str) -> str:
    """``blocks.3.attn.qkv.weight`` → ``b3.qkv``: a half-width column's name."""
    return short_layer_name(name).replace(".attn.", ".").replace(".ffn.", ".")


def layers_text(health: LayerHealth | None, width: int = 12, step: int | None = None,
                height: int = 0) -> Text:
    """Per matrix: its update size (log10 ‖ΔW‖/‖W‖) over the last samples, the latest value and
    gradient norm, ``!`` outside its optimizer's band; a header with each band. When ``height``
    lines cannot hold a line per matrix (a 4-layer model at 80×24 has 19), two matrices share a
    line, without the gradient norm, so the last blocks and the head stay in sight."""
    out = Text()
    out.append("Layer health", style="bold")
    if health is None or not health.steps:
        out.append("\nnot recorded for this run" if health is None else "\nafter the first sample", style="dim")
        return out
    last = layer_index(health, step)
    bands = health.bands(last)
    outside = set(health.outside(last))
    out.append(f" step {health.steps[last]}, log10 ‖ΔW‖/‖W‖\n", style="dim")
    out.append("  " + "  ".join(f"{opt} {(lo + hi) / 2:+.1f}±1" for opt, (lo, hi) in bands.items()) + "\n",
               style="dim")
    history = health.ratio[max(0, last - width + 1): last + 1]
    values = [v for row in history for v in row if v is not None]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    if height and len(health.names) + 3 > height:
        _two_a_line(out, health, history, last, outside, lo, hi)
    else:
        _one_a_line(out, health, history, last, outside, lo, hi, width)
    if outside:
        out.append(f"! {len(outside)} outside the band", style="bold")
    else:  # the legend, while nothing needs it
        out.append("! and bold: outside its band (none)", style="dim")
    return out


def layer_index(health: LayerHealth, step: int | None) -> int:
    """The sample layer health shows at ``step``: the last at or before it (None: the latest)."""
    if step is None:
        return len(health.steps) - 1
    return max([i for i, s in enumerate(health.steps) if s <= step], default=0)


def view_steps(surprise: Surprise | None, health: LayerHealth | None, step: int) -> dict[str, int]:
    """The step each inside view really shows while the panel is at ``step`` (a snapshot's):
    surprise and layer health are recorded at their own steps, the last one at or before it."""
    steps = {}
    got = surprise.at(step) if surprise is not None else None
    if got is not None:
        steps["surprise"] = got[0]
    if health is not None and health.steps:
        steps["layers"] = health.steps[layer_index(health, step)]
    return steps


def _two_a_line(out: Text, health: LayerHealth, history, last: int, outside: set, lo: float, hi: float) -> None:
    for start in range(0, len(health.names), 2):
        for k, m in enumerate(range(start, min(start + 2, len(health.names)))):
            ratio = health.ratio[last][m]
            flag = "!" if m in outside else " "
            out.append(("" if k == 0 else " ") + f"{compact_layer_name(health.names[m])[:8]:<8}"
                       f"{spark([row[m] for row in history], lo, hi)[-6:]:<6} "
                       f"{ratio if ratio is not None else float('nan'):+4.1f}{flag}",
                       style="bold" if m in outside else "")
        out.append("\n")


def _one_a_line(out: Text, health: LayerHealth, history, last: int, outside: set, lo: float, hi: float,
                width: int) -> None:
    for m, name in enumerate(health.names):
        ratio, grad = health.ratio[last][m], health.grad[last][m]
        flag = "!" if m in outside else " "
        line = (f"{short_layer_name(name)[:14]:<14} {spark([row[m] for row in history], lo, hi):<{width}} "
                f"{ratio if ratio is not None else float('nan'):+5.1f} {flag}")
        out.append(line + (f" g{grad:.2g}" if grad is not None else "") + "\n",
                   style="bold" if m in outside else "")
