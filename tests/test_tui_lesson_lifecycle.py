"""The lesson screen's deferred work (the rest of its blocks, the reading position, its timers)
never outlives the screen: leaving at once, or n/p twice in one burst, leaves the app running.

The burst tests ran with every core busy: the races they guard against showed only under load. They
run on a quiet worker in the default tier and again with every core busy in the soak tier
(``busy_in_soak``). The two that stage a late mount on purpose (the order is forced) need no load.
"""

from __future__ import annotations

import asyncio

import pytest
from textual import events
from textual.containers import VerticalScroll

from minigpt.lessons import load_lessons
from tests.helpers.waiting import until
from tui.home.home import HomeScreen
from tui.lessons.lesson import LessonScreen


def _settled(app) -> bool:
    return isinstance(app.screen, LessonScreen) and app.screen.position_restored


# The lessons' safety timer (ReadingPosition.restore_safety_s, 3 s in the app) shortened, so the
# tests wait past it in a fraction of the time, with every core busy: a shorter timer fires sooner
# after the keys, which makes the race these tests guard against more likely, not less.
SAFETY_S = 0.5


@pytest.fixture(autouse=True)
def quick_safety_timer(monkeypatch):
    monkeypatch.setattr(LessonScreen, "restore_safety_s", SAFETY_S)


def _burst(app, keys) -> None:
    """Keys as a terminal delivers a burst: all queued before the app handles the first one."""
    for key in keys:
        app.post_message(events.Key(key, key if len(key) == 1 else None))


async def test_a_lesson_left_at_once_leaves_the_app_running(app, busy_in_soak):
    lessons = load_lessons()
    async with app.run_test(size=(80, 24)) as pilot:
        for lesson in lessons[:6]:
            app.open_lesson(lesson.id)
            _burst(app, ["escape"])  # escape before the first frame, the position, the 3 s timer
            await until(pilot, lambda: isinstance(app.screen, HomeScreen), 30, "the home screen again")
        await pilot.pause(SAFETY_S + 1)  # past the lessons' safety timer: nothing of theirs runs now
        assert app.is_running and isinstance(app.screen, HomeScreen)
        assert app.return_code is None


async def test_typing_into_a_lesson_then_escape_leaves_the_app_running(app, busy_in_soak):
    lesson = load_lessons()[0]
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(lesson.id)
        await until(pilot, lambda: _settled(app), 30, "the lesson to settle")
        _burst(app, "asdfqwerty")
        _burst(app, ["escape"])
        await until(pilot, lambda: not isinstance(app.screen, LessonScreen), 30, "the lesson to close")
        await pilot.pause(0.5)
        assert app.is_running and app.return_code is None


# n n and p n by default (onwards twice; there and back); their mirrors p p and n p in soak
@pytest.mark.parametrize("keys", ["nn", "pn", pytest.param("pp", marks=pytest.mark.soak),
                                  pytest.param("np", marks=pytest.mark.soak)])
async def test_two_lesson_keys_in_one_burst_move_twice_and_leave_the_app_running(app, keys, busy_in_soak):
    ids = [lesson.id for lesson in load_lessons()]
    start = 3
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(ids[start])
        await until(pilot, lambda: _settled(app), 30, "the first lesson to settle")
        first = app.screen
        _burst(app, keys)
        expected = ids[start + sum(+1 if k == "n" else -1 for k in keys)]
        await until(pilot, lambda: _settled(app) and app.screen is not first and app.screen.lesson.id == expected, 30,
                    f"lesson {expected} after {keys!r}",
                    describe=lambda: f"now {getattr(app.screen, 'lesson', app.screen)!r}")
        assert app.is_running and app.return_code is None
        # nothing of the lessons left behind runs on the one shown (its position, its timer)
        await pilot.pause(SAFETY_S + 1)
        assert app.is_running and _settled(app) and app.screen.lesson.id == expected


async def test_a_safety_timer_that_fires_before_the_rest_is_mounted_neither_marks_read_nor_loses_the_place(
        app, monkeypatch):
    """Under load the 3 s safety timer fired before the rest of a long lesson was mounted: the
    lesson looked a screenful long, so it restored to the top, saved the place as the end and
    marked the lesson read. Here the rest mounts late on purpose and the timer fires first."""
    mount_rest = LessonScreen._mount_rest

    async def late_mount_rest(screen):
        await asyncio.sleep(0.5)  # what a busy event loop does to the deferred mount
        await mount_rest(screen)

    monkeypatch.setattr(LessonScreen, "_mount_rest", late_mount_rest)
    monkeypatch.setattr(LessonScreen, "restore_safety_s", 0.05)
    lesson = max(load_lessons(), key=lambda l: len(l.body))
    app.store.save_lesson_position(lesson.id, 0.5)
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(lesson.id)
        await until(pilot, lambda: _settled(app), 30, "the lesson to settle")
        body = app.screen.query_one("#lesson-body", VerticalScroll)
        assert body.max_scroll_y > 0
        assert body.scroll_y == pytest.approx(0.5 * body.max_scroll_y, abs=2)
        assert not app.screen.is_read and app.store.lesson_position(lesson.id) == pytest.approx(0.5, abs=0.02)
        await pilot.press("G")  # the end at once: seen, but most of the lesson was not
        await until(pilot, lambda: "page through it" in str(app.screen.query_one("#lesson-end").render()), 30,
                    "the end line to ask for the rest")
        assert not app.screen.is_read


async def test_tab_pressed_on_arrival_focuses_the_first_snippet_once_the_lesson_settles(app, monkeypatch):
    """A tab pressed on arrival, while the rest of the lesson (its snippets) is still to mount,
    found the snippet key disabled and was lost (a loaded browser run: the footer offered
    "tab Snippet", the tab did nothing). Now the key is on for any lesson with a snippet, and a
    tab before the place is restored focuses the first snippet after it, scrolled into view."""
    from tui.lessons.snippet import SnippetBlock

    mount_rest = LessonScreen._mount_rest

    async def late_mount_rest(screen):
        await asyncio.sleep(0.5)  # what a busy event loop does to the deferred mount
        await mount_rest(screen)

    monkeypatch.setattr(LessonScreen, "_mount_rest", late_mount_rest)
    lesson = next(l for l in load_lessons() if l.id == "scaling-laws")
    app.store.save_lesson_position(lesson.id, 0.3)  # the restore must not scroll it away again
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(lesson.id)
        await until(pilot, lambda: isinstance(app.screen, LessonScreen), 30, "the lesson")
        assert not app.screen.query(SnippetBlock) and app.screen.check_action("next_snippet", ()) is True
        _burst(app, ["tab"])
        first = await until(pilot, lambda: _settled(app) and app.screen.query(SnippetBlock).first(), 30,
                            "the lesson to settle with its snippets")
        await until(pilot, lambda: app.focused is first, 30, "the first snippet to take focus")
        body = app.screen.query_one("#lesson-body", VerticalScroll)
        await until(pilot, lambda: body.region.y <= first.region.y < body.region.bottom, 30, "the snippet in view",
                    describe=lambda: f"snippet at {first.region}, body {body.region}")
        await pilot.press("enter")
        await until(pilot, lambda: first.state not in ("idle", "running"), 60, "the snippet to run")
        assert first.state == "done", first.output_text
