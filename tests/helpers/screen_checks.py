"""What "fits 80×24" means, checked on a live screen: the footer's keys, clipped widgets, cut words.

Used by tests/test_tui_fit.py (every screen) and by tests of single screens. Each check returns a
list of problems in words (empty: fine), so one failing test names every problem at once.
"""

from __future__ import annotations

import re

from textual.widgets import DataTable, Footer
from textual.widgets._footer import FooterKey

# A letter or digit touching a box's right edge, a scrollbar or the screen's edge has lost its end.
EDGE_GLYPHS = "│┃║╮╯┐┘┤▕▏▁▂▃▄▅▆▇█▔"
CUT_AT_EDGE = re.compile(rf"[A-Za-z0-9][{EDGE_GLYPHS}]")


def footer_problems(screen) -> list[str]:
    """Every footer key must be visible left of the command-palette key (nothing pushed off)."""
    problems = []
    for footer in screen.query(Footer):
        keys = [k for k in footer.query(FooterKey) if k.display]
        palette = [k for k in keys if k.has_class("-command-palette")]
        limit = palette[0].region.x if palette else footer.region.right
        for key in keys:
            if key in palette:
                continue
            region = key.region
            if region.width == 0 or region.right > limit:
                problems.append(f"footer key {key.key_display or key.key!r} ({key.description}) is cut off "
                                f"(ends at column {region.right}, room up to {limit})")
    return problems


def _scrolls_sideways(widget) -> bool:
    node = widget.parent
    while node is not None and hasattr(node, "show_horizontal_scrollbar"):
        if node.show_horizontal_scrollbar:
            return True
        node = node.parent
    return False


def clipping_problems(screen) -> list[str]:
    """Widgets cut at the right or left by their container (unless it scrolls sideways), and
    tables wider than their box."""
    problems = []
    full_map = screen._compositor.full_map
    for widget, geometry in full_map.items():
        if not widget.display or not widget.visible or isinstance(widget, FooterKey):
            continue
        if any(isinstance(a, Footer) for a in widget.ancestors):
            continue
        region, clip = geometry.region, geometry.clip
        if region.width == 0 or region.height == 0:
            continue
        if region.y >= clip.bottom or region.bottom <= clip.y:
            continue  # scrolled out of view vertically: reachable by scrolling
        if (region.right > clip.right or region.x < clip.x) and not _scrolls_sideways(widget):
            problems.append(f"{_name(widget)} is cut: columns {region.x}–{region.right} shown in {clip.x}–{clip.right}")
        if isinstance(widget, DataTable) and widget.virtual_size.width > widget.scrollable_content_region.width:
            problems.append(f"{_name(widget)} is {widget.virtual_size.width} columns wide in a box of "
                            f"{widget.scrollable_content_region.width}")
    return problems


def blank_charts(screen, lines: list[str]) -> list[str]:
    """The lines with every chart's cells blanked: a plot's axes and points touch its frame by design."""
    from textual_plotext import PlotextPlot

    out = list(lines)
    for chart in screen.query(PlotextPlot):
        if not chart.display:
            continue
        r = chart.region.intersection(screen.region)
        for y in range(r.y, min(r.bottom, len(out))):
            row = out[y].ljust(r.right)
            out[y] = row[: r.x] + " " * r.width + row[r.right:]
    return out


def text_problems(lines: list[str]) -> list[str]:
    """Words that run into a border, a scrollbar or the screen's right edge (the footer row aside)."""
    problems = []
    width = max((len(line) for line in lines), default=0)
    for number, line in enumerate(lines[:-1], start=1):
        for m in CUT_AT_EDGE.finditer(line):
            problems.append(f"line {number}: {line[max(0, m.start() - 12): m.end()].strip()!r} runs into "
                            f"{line[m.end() - 1]!r}")
        if len(line) == width and width and line[-1].isalnum() and line[-2:-1].isalnum():
            problems.append(f"line {number}: {line[-14:].strip()!r} runs into the screen's edge")
    return problems


def screen_lines(app) -> list[str]:
    """The screen as plain text, one string per terminal row."""
    from rich.console import Console

    console = Console(width=app.size.width, height=app.size.height, record=True, legacy_windows=False,
                      color_system=None, file=open("/dev/null", "w"))
    try:
        screen_render = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
        console.print(screen_render)
        text = console.export_text(styles=False)
    finally:
        console.file.close()
    return text.rstrip("\n").split("\n")


def all_problems(app) -> list[str]:
    screen = app.screen
    return (footer_problems(screen) + clipping_problems(screen)
            + text_problems(blank_charts(screen, screen_lines(app))))


def _name(widget) -> str:
    return f"{type(widget).__name__}#{widget.id}" if widget.id else type(widget).__name__
