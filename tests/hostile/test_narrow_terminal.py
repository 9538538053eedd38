"""Starting in a terminal narrower than the app: the too-small screen, never a crash (widths
10–30 raised `range() arg 3 must not be zero` from the home screen's first layout)."""

from __future__ import annotations

import pytest

from minigpt.lessons import load_lessons
from tests.helpers.waiting import until
from tui.home.home import HomeScreen
from tui.home.too_small import TooSmallScreen
from tui.lessons.lesson import LessonScreen


@pytest.mark.parametrize("size", [(30, 8), (10, 8), (20, 24), (25, 40), (79, 24),
                                  (1, 1), (200, 3)])  # the last three: not tried by the sweep
async def test_starting_narrow_shows_the_resize_message_then_home(make_app, size):
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TooSmallScreen), 30, "the resize message")
        assert not any(isinstance(s, HomeScreen) for s in app.screen_stack)  # not laid out at that width
        if size[0] >= 10:
            assert "80×24" in str(app.screen.query_one("#too-small-text").render())
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), 30, "home")
        await pilot.resize_terminal(*size)  # and down again, from a running app
        await until(pilot, lambda: isinstance(app.screen, TooSmallScreen), 30, "the resize message again")


async def test_a_lesson_asked_for_on_the_command_line_opens_once_the_terminal_is_large(make_app):
    lesson = load_lessons()[0]
    app = make_app(initial=f"lesson:{lesson.id}")
    async with app.run_test(size=(30, 8)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TooSmallScreen), 30, "the resize message")
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: isinstance(app.screen, LessonScreen), 30, "the lesson asked for")
        assert app.screen.lesson.id == lesson.id
        assert isinstance(app.screen_stack[-2], HomeScreen)


@pytest.mark.soak
@pytest.mark.parametrize("screen", ["lessons", "flashcards", "quiz", "stats", "runs", "experiments",
                                    "explorer_menu"])
async def test_screens_resized_down_to_a_sliver_show_the_message(make_app, screen):
    """Not tried by the sweep: every screen of the home menu, opened directly, shrunk from 80×24 to
    10–30 columns. Soak: tests/test_tui_fit.py's walk shrinks every screen it reaches the same way."""
    from tui import navigation

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), 30, "home")
        navigation.open_screen(app, screen)
        await until(pilot, lambda: navigation.is_screen(app.screen, screen), 30, f"the {screen} screen")
        for size in [(30, 8), (10, 8), (20, 24)]:
            await pilot.resize_terminal(*size)
            await until(pilot, lambda: isinstance(app.screen, TooSmallScreen), 30, f"the resize message at {size}")
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: navigation.is_screen(app.screen, screen), 30, f"the {screen} screen again")
