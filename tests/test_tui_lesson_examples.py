"""A lesson opens with its text, then its worked examples: a miss is computed in a child process
(never on the event loop), its block says "computing…" in place and fills without moving the
reader; a cached example shows at once. Scrolling a laid-out lesson does constant work."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static

from minigpt.teaching.examples import cache
from minigpt.teaching.examples.catalog import render_example
from tests.helpers.waiting import until
from tui.lessons import lesson_blocks
from tui.lessons.lesson import LessonScreen
from tui.lessons.lesson_blocks import ExampleBlock

LESSON = "four-token-example"  # three attention examples, quick to compute
IDS = ["attention.course.scores", "attention.course.weights", "attention.course.output"]


def _settled(app) -> bool:
    return isinstance(app.screen, LessonScreen) and app.screen.position_restored and app.screen.examples_filled


async def test_a_miss_is_computed_off_the_event_loop_and_filled_in_place(app, monkeypatch, tmp_path):
    monkeypatch.setenv("MINIGPT_CACHE_DIR", str(tmp_path / "empty-cache"))
    on_loop, filled = [], []
    monkeypatch.setattr(lesson_blocks, "render_example", lambda i: on_loop.append(i) or render_example(i))
    original_fill = ExampleBlock.fill

    async def recording_fill(block, text, error=None):
        filled.append((block.example_id, str(block.query_one(Static).render())))  # what it showed before
        await original_fill(block, text, error)

    monkeypatch.setattr(ExampleBlock, "fill", recording_fill)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(LESSON)
        await until(pilot, lambda: _settled(app), 60, "the lesson with its examples filled")
        shown = {b.example_id: b.query_one(Markdown).source for b in app.screen.query(ExampleBlock)}
    assert on_loop == []  # nothing computed on the event loop
    assert sorted(filled) == sorted((i, "computing…") for i in IDS)
    assert shown == {i: render_example(i) for i in IDS}
    assert all(cache.cached(i) == render_example(i) for i in IDS)  # kept for the next opening


async def test_a_cached_example_shows_with_the_lesson_without_a_child(app, monkeypatch, tmp_path):
    monkeypatch.setenv("MINIGPT_CACHE_DIR", str(tmp_path / "cache"))
    for example_id in IDS:
        cache.store(example_id, f"**kept {example_id}**")

    def no_child(ids):
        raise AssertionError(f"a child was started for {ids}")

    monkeypatch.setattr(cache, "ChildComputation", no_child)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(LESSON)
        await until(pilot, lambda: _settled(app), 30, "the lesson")
        shown = {b.example_id: b.query_one(Markdown).source for b in app.screen.query(ExampleBlock)}
    assert shown == {i: f"**kept {i}**" for i in IDS}


class Page(App):
    CSS = ".example { height: auto; border: round green; padding: 0 1; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="body"):
            yield from (Static(f"line {i}", id=f"before-{i}") for i in range(5))
            yield ExampleBlock(IDS[0])
            yield from (Static(f"line {i}", id=f"after-{i}") for i in range(60))


async def test_filling_a_block_above_the_view_keeps_the_readers_place(monkeypatch, tmp_path):
    monkeypatch.setenv("MINIGPT_CACHE_DIR", str(tmp_path / "empty-cache"))
    app = Page()
    tall = "\n\n".join(f"paragraph {i}" for i in range(12))
    async with app.run_test(size=(80, 24)) as pilot:
        body, block = app.query_one("#body", VerticalScroll), app.query_one(ExampleBlock)
        assert not block.filled and "computing" in str(block.query_one(Static).render())
        body.scroll_to(y=20, animate=False, immediate=True)
        await pilot.pause()
        top = app.query_one("#after-18")
        offset = top.virtual_region.y - body.scroll_y
        height = block.outer_size.height
        await block.fill(tall)
        await until(pilot, lambda: block.outer_size.height > height + 10 and top.virtual_region.y - body.scroll_y == offset,
                    10, "the line on top of the view to stay there", describe=lambda: f"{body.scroll_y}")


async def test_filling_a_block_below_the_view_does_not_scroll(monkeypatch, tmp_path):
    monkeypatch.setenv("MINIGPT_CACHE_DIR", str(tmp_path / "empty-cache"))
    app = Page()
    async with app.run_test(size=(80, 40)) as pilot:
        body, block = app.query_one("#body", VerticalScroll), app.query_one(ExampleBlock)
        height = block.outer_size.height
        await block.fill("\n\n".join(f"paragraph {i}" for i in range(12)))
        await until(pilot, lambda: block.outer_size.height > height + 10, 10, "the block to grow")
        await pilot.pause()
        assert body.scroll_y == 0


async def test_scrolling_a_laid_out_lesson_does_not_query_its_widgets(app, monkeypatch):
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(LESSON)
        await until(pilot, lambda: _settled(app), 60, "the lesson")
        await pilot.pause()
        screen, asked = app.screen, []
        assert screen._laid_out
        query = type(screen).query

        def counting(self, selector=None):
            asked.append(selector)
            return query(self, selector)

        monkeypatch.setattr(type(screen), "query", counting)
        body = screen.query_one("#lesson-body", VerticalScroll)
        for _ in range(10):
            await pilot.press("j")
        await until(pilot, lambda: body.scroll_y == 10 and screen.view_recorded, 10, "ten lines down")
        assert Markdown not in asked
        screen._layout_changed()  # a block mounted or filled, or a resize: the widgets are asked again
        assert screen._laid_out and asked.count(Markdown) == 1


async def test_the_reading_position_is_restored_once_the_examples_have_filled(app, monkeypatch, tmp_path):
    """The saved fraction was taken from the whole lesson, examples included: applied while they
    still said "computing…" it pointed into a shorter lesson, and the fill kept that wrong place.
    The place waits for the last example, then lands at the fraction of the full height."""
    import threading

    monkeypatch.setenv("MINIGPT_CACHE_DIR", str(tmp_path / "empty-cache"))
    release = threading.Event()
    tall = "\n\n".join(f"worked line {i}" for i in range(30))

    class SlowChild:
        def __init__(self, example_ids):
            self.example_ids = example_ids

        def answers(self):
            release.wait(30)
            for example_id in self.example_ids:
                yield example_id, tall, None

        def stop(self):
            release.set()

    monkeypatch.setattr(cache, "ChildComputation", SlowChild)
    app.store.save_lesson_position(LESSON, 0.6)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(LESSON)
        await until(pilot, lambda: isinstance(app.screen, LessonScreen) and app.screen._laid_out, 30, "the text")
        screen = app.screen
        for _ in range(5):
            await pilot.pause()
        assert not screen.position_restored and not screen.examples_filled  # still computing: not yet
        release.set()
        await until(pilot, lambda: _settled(app), 30, "the examples and the place")
        body = screen.query_one("#lesson-body", VerticalScroll)
        await pilot.pause()
        assert abs(body.scroll_y - 0.6 * body.max_scroll_y) <= 1, (body.scroll_y, body.max_scroll_y)
