"""The parts of a lesson screen that are not the screen: its worked-example block, where its
first screenful ends, and the record of what the learner has seen of it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from textual.app import ComposeResult
from textual.containers import ScrollableContainer, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Markdown, Static

from minigpt.teaching.examples.cache import cached, is_cacheable
from minigpt.teaching.examples.catalog import render_example
from minigpt.text import markup_escape


class ExampleBlock(Vertical):
    """A worked example: the numbers come from ``minigpt.teaching.examples`` (the disk cache, a lab
    job's folder, or a child process the lesson starts for the misses: ``fill``)."""

    COMPUTING = "[dim]computing…[/dim]"

    class Filled(Message):
        """The block's text arrived: the lesson's height changed (tui.lessons.lesson_reading)."""

    def __init__(self, example_id: str):
        super().__init__(classes="example")
        self.example_id = example_id
        self.border_title = "worked example · computed by minigpt"
        self.filled = True

    def compose(self) -> ComposeResult:
        if not is_cacheable(self.example_id):  # a lab job's example reads its folder: quick, never kept
            yield self._content()
        elif (text := cached(self.example_id)) is not None:
            yield Markdown(text)
        else:  # computed off the event loop (the lesson screen starts it) and filled in place
            self.filled = False
            yield Static(self.COMPUTING, classes="example-computing")

    def _content(self):
        try:
            text = render_example(self.example_id)
        except Exception as e:  # never lose the lesson because one example broke
            return self._failure(e)
        return Markdown(text)

    def _failure(self, error) -> Static:
        return Static(f"[red]Example {self.example_id!r} could not be computed: {markup_escape(str(error))}[/red]")

    async def fill(self, text: str | None, error: str | None = None) -> None:
        """Show the computed text (or why there is none) in place of "computing…", keeping the
        reader's place: a block above the view grows upwards, as far as the view is concerned."""
        body = self.parent
        above = isinstance(body, ScrollableContainer) and self.virtual_region.y < body.scroll_y
        start_y, start_height = (body.scroll_y, self.outer_size.height) if above else (0.0, 0)
        await self.remove_children()
        await self.mount(Markdown(text) if text is not None else self._failure(error))
        self.filled = True
        self.post_message(self.Filled())
        if above:
            self.call_after_refresh(self._keep_place, body, start_y, start_height, start_y, 5)

    def _keep_place(self, body: ScrollableContainer, start_y: float, start_height: int, placed: float,
                    refreshes: int) -> None:
        """Scroll by what the block grew, for a few refreshes (the Markdown lays out late), unless
        the reader scrolled meanwhile."""
        if not self.is_attached or body.scroll_y != placed:
            return
        target = start_y + self.outer_size.height - start_height
        if abs(body.scroll_y - target) >= 1:
            body.scroll_to(y=target, animate=False, immediate=True)
        if refreshes > 0:
            self.call_after_refresh(self._keep_place, body, start_y, start_height, body.scroll_y, refreshes - 1)

    async def recompute(self) -> None:
        """Compute the example again (a lab job's result arrived while the lesson was open)."""
        await self.remove_children()
        await self.mount(self._content())
        self.post_message(self.Filled())


class LessonBody(VerticalScroll):
    """The lesson's scrolling body. A focus change restyles only the body itself: Textual restyles
    a widget and every descendant when its focus changes (for rules such as ``X:focus Y``), and no
    rule styles a lesson's blocks by the body's focus; with ~700 widgets in a long lesson that was
    0.2-0.3 s on each focus change, paid on every lesson open and again on every escape."""

    def watch_has_focus(self, _has_focus: bool) -> None:
        self.app.stylesheet.update_nodes([self], animate=True)


FIRST_BLOCKS = 1      # lesson blocks built with the screen; the others follow its first frame
FIRST_SCREEN_LINES = 18  # source lines of Markdown in the first frame: a 24-line terminal's worth


def split_first_screen(text: str, lines: int = FIRST_SCREEN_LINES) -> list[str]:
    """Cut Markdown into its first screenful and the rest, at the first new paragraph or heading
    after ``lines`` source lines (outside code fences; never inside a list, a table or a quote), so
    both halves render as they would together."""
    rows, fenced = text.split("\n"), False
    for i, row in enumerate(rows):
        if row.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and i >= lines and not rows[i - 1].strip() and _starts_a_block(row):
            return ["\n".join(rows[:i]), "\n".join(rows[i:])]
    return [text]


def _starts_a_block(row: str) -> bool:
    """A paragraph or a heading, not the next item of a list, a table row, a quote or code."""
    return row[:1].isalpha() or row.startswith(("#", "**", "`"))


READ_SHARE = 0.9      # share of a lesson that must have been on screen to count it as read
SETTLE_S = 0.2        # a view counts as seen once the learner rests on it this long


class SeenRanges:
    """The parts of a lesson (fractions 0..1 of its height) that have been on screen."""

    def __init__(self, ranges: Iterable[Sequence[float]] | None = None):
        self.ranges: list[tuple[float, float]] = []
        for a, b in ranges or []:
            self.add(float(a), float(b))

    def add(self, start: float, end: float) -> None:
        start, end = max(0.0, min(start, end)), min(1.0, max(start, end))
        merged = []
        for a, b in sorted(self.ranges + [(start, end)]):
            if merged and a <= merged[-1][1] + 1e-9:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        self.ranges = merged

    @property
    def share(self) -> float:
        return sum(b - a for a, b in self.ranges)

    def rounded(self) -> tuple[tuple[float, float], ...]:
        """The ranges as stored (minigpt.settings.LESSON_SEEN): to 4 places, a ten-thousandth of the lesson."""
        return tuple((round(a, 4), round(b, 4)) for a, b in self.ranges)
