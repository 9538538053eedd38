"""Every layer × head of a trained model's attention as a grid of small heatmaps.

Two query rows share one terminal row (the upper half-block takes the top row's colour, the
background the lower row's), so a 16-token map is 8 rows tall. Where colour cannot show four
levels apart (NO_COLOR, 16 colours, ansi themes) or the learner asks for it (g), each query row
gets its own line of ramp glyphs instead. A layer's heads wrap onto more rows of tiles when they
do not fit the width. Arrows pick a head; enter focuses it.
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
from tui.common.matrix_view import glyphs_wanted, rich_colour


class AttentionGrid(Widget, can_focus=True):
    BINDINGS = [
        Binding("up", "move(-1, 0)", "Layer ↑", show=False, id="attention_grid.up"),
        Binding("down", "move(1, 0)", "Layer ↓", show=False, id="attention_grid.down"),
        Binding("left", "move(0, -1)", "Head ←", show=False, id="attention_grid.left"),
        Binding("right", "move(0, 1)", "Head →", show=False, id="attention_grid.right"),
        Binding("enter", "choose", "Focus head", show=True, id="attention_grid.choose"),
    ]

    cursor: reactive[tuple[int, int]] = reactive((0, 0))
    glyphs: reactive[bool | None] = reactive(None)  # None: decided by the terminal

    class HeadChosen(Message):
        def __init__(self, layer: int, head: int):
            super().__init__()
            self.layer, self.head = layer, head

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.maps: list = []  # [layer][head] -> T×T nested lists of weights

    def set_maps(self, maps) -> None:
        self.maps = maps
        self.cursor = (0, 0)
        self.refresh(layout=True)

    @property
    def T(self) -> int:
        return len(self.maps[0][0]) if self.maps else 0

    def action_move(self, dl: int, dh: int) -> None:
        if self.maps:
            L, H = len(self.maps), len(self.maps[0])
            self.cursor = ((self.cursor[0] + dl) % L, (self.cursor[1] + dh) % H)

    def action_choose(self) -> None:
        if self.maps:
            self.post_message(self.HeadChosen(*self.cursor))

    def watch_cursor(self) -> None:
        self.refresh()

    def watch_glyphs(self) -> None:
        self.refresh(layout=True)

    @property
    def show_glyphs(self) -> bool:
        return self.glyphs if self.glyphs is not None else glyphs_wanted(self.app)

    def _tile_w(self) -> int:
        return max(self.T, 6) + 2

    def heads_per_row(self, width: int) -> int:
        return max(1, width // self._tile_w())

    def get_content_height(self, container, viewport, width) -> int:
        if not self.maps:
            return 1
        rows = self.T if self.show_glyphs else (self.T + 1) // 2
        per_row = self.heads_per_row(width)
        tile_rows = len(self.maps) * -(-len(self.maps[0]) // per_row)
        return tile_rows * (rows + 1)

    def _colour(self, level: int) -> str | None:
        if level < 0:
            return None
        theme = self.app.current_theme
        hue = Color.parse(theme.accent or "#fea62b")
        if hue.ansi is not None:
            return rich_colour(hue) if level >= 3 else ("bright_black" if level >= 1 else "black")
        base = Color.parse(theme.background or "#121212")
        return base.blend(hue, level / heatmap.UNIT_MAX).hex

    def render(self) -> Text:
        out = Text()
        if not self.maps:
            out.append("no attention maps yet", style="dim")
            return out
        tw = self._tile_w()
        per_row = self.heads_per_row(self.size.width or 80)
        glyphs = self.show_glyphs
        for layer, heads in enumerate(self.maps):
            for first in range(0, len(heads), per_row):
                shown = range(first, min(first + per_row, len(heads)))
                for h in shown:
                    label = f"L{layer}H{h}"
                    sel = (layer, h) == self.cursor
                    out.append(f"[{label}]".ljust(tw) if sel else f" {label}".ljust(tw),
                               style="bold reverse" if sel else "dim")
                out.append("\n")
                if glyphs:
                    colour = self._colour(heatmap.UNIT_MAX)
                    for i in range(self.T):
                        for h in shown:
                            ramp = "".join(heatmap.glyph(heatmap.unit_level(v), "unit") for v in heads[h][i])
                            out.append(" ")
                            out.append(ramp, style=Style(color=colour))
                            out.append(" " * (tw - 1 - self.T))
                        out.append("\n")
                    continue
                pairs = [heatmap.half_block_rows(heads[h]) for h in shown]
                for r in range((self.T + 1) // 2):
                    for p in pairs:
                        out.append(" ")
                        for top, bottom in p[r]:
                            out.append("▀", style=Style(color=self._colour(top), bgcolor=self._colour(bottom)))
                        out.append(" " * (tw - 1 - self.T))
                    out.append("\n")
        return out
