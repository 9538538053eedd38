"""The app shell driven with Pilot: home, lessons, snippets, palette, help, themes, sizes."""

from __future__ import annotations

import re

import pytest
from textual.command import CommandList
from textual.containers import VerticalScroll
from textual.widgets import Markdown, OptionList

from minigpt.lessons import load_lessons
from minigpt.store import Store
from minigpt.teaching.examples.cache import cached, compute, is_cacheable
from minigpt.teaching.examples.catalog import render_example
from tests.helpers.waiting import until
from tui.areas import AREAS
from tui.home.help import HelpScreen
from tui.home.home import HomeScreen
from tui.home.too_small import TooSmallScreen
from tui.lessons import lesson_blocks
from tui.lessons.lesson import ExampleBlock, LessonScreen
from tui.lessons.lessons import LessonsScreen
from tui.lessons.snippet import SnippetBlock


async def test_launch_lands_on_home_with_every_area(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        options = app.screen.query_one("#area-list", OptionList)
        assert [options.get_option_at_index(i).id for i in range(options.option_count)] == [a.id for a in AREAS]


# Every lesson opens and shows its examples by default; paging through every one of them to the end
# (~85 pages) is the same walk again, so it is the soak variant: the default tier pages the longest
# lesson to the end at 80x24 below (test_jumping_to_the_end_on_arrival_does_not_mark_a_lesson_read).
# The default walk is cut into parts, each on an app of its own, so the two test workers share it
# (one walk was the default tier's longest test, 140-180 s under load, alone at its end).
WALK_PARTS = 4


@pytest.mark.parametrize(("page_through", "part"),
                         [pytest.param(False, k, id=f"open-part-{k + 1}-of-{WALK_PARTS}") for k in range(WALK_PARTS)]
                         + [pytest.param(True, None, id="page-to-the-end", marks=pytest.mark.soak)])
async def test_every_lesson_opens_renders_its_examples_and_is_marked_read_at_the_end(app, monkeypatch, page_through,
                                                                                     part):
    monkeypatch.setattr(LessonScreen, "settle_s", 0.02)  # a quick reader: rests 0.02 s a page
    # What the library returned for each example while the app displayed it: a lab job's example
    # on the event loop, the others computed here, in this process, into the session's cache just
    # before the lesson opens, so the app shows them from the cache as on a second launch (a child
    # per lesson would import torch 45 times; test_tui_lesson_examples checks the child's path,
    # test_examples pins the numbers, test_example_cache that the cache holds what was rendered).
    rendered = {}

    def recording(example_id):
        rendered[example_id] = render_example(example_id)
        return rendered[example_id]

    monkeypatch.setattr(lesson_blocks, "render_example", recording)
    lessons = load_lessons() if part is None else load_lessons()[part::WALK_PARTS]  # each in one part
    assert lessons
    # 80 columns (the narrowest the app allows: the longest lines wrap); the paging walk has a tall
    # window, so it pages ~85 times instead of ~250; the opening walk the smallest window (less to
    # draw on each frame: ~15% quicker than 80x60).
    async with app.run_test(size=(80, 60) if page_through else (80, 24)) as pilot:
        for lesson in lessons:
            for example_id in lesson.example_ids():
                if is_cacheable(example_id) and cached(example_id) is None:
                    compute(example_id)
            await _open_and_settle(app, pilot, lesson.id)
            screen = app.screen
            assert isinstance(screen, LessonScreen) and screen.lesson.id == lesson.id
            examples = list(screen.query(ExampleBlock))
            assert [e.example_id for e in examples] == lesson.example_ids()
            for block in examples:  # the numbers shown are the library's, rendered for the current code
                md = block.query_one(Markdown)
                assert md.source == rendered.get(block.example_id) or md.source == cached(block.example_id)
            if page_through:
                body = screen.query_one("#lesson-body", VerticalScroll)
                for _ in range(200):  # page through like a reader, resting on each page until it counts
                    await pilot.press("space")
                    await until(pilot, lambda shown=screen: shown.view_recorded, 30,
                                f"a page of {lesson.id} to be recorded")
                    if body.scroll_y >= body.max_scroll_y - 1:
                        break
                assert screen.is_read, lesson.id
            await pilot.press("escape")
            await until(pilot, lambda shown=screen: app.screen is not shown, 30, f"{lesson.id} to close")
        if page_through:
            assert app.store.lessons_read() == {l.id for l in lessons}


# The safety timer that once marked a long lesson read before its rest was mounted (a0c6267) raced
# only under load: these two tests ran with every core busy. The deterministic check mounts the rest
# late on purpose (test_tui_lesson_lifecycle: the safety timer that fires before the rest is
# mounted); by default these two run on a quiet worker,
# and the soak tier runs them again with every core busy.
async def test_jumping_to_the_end_on_arrival_does_not_mark_a_lesson_read(app, busy_in_soak):
    lesson = max(load_lessons(), key=lambda l: len(l.body))
    async with app.run_test(size=(80, 24)) as pilot:
        body = await _open_and_settle(app, pilot, lesson.id)
        await pilot.press("G")
        await until(pilot, lambda: "page through it" in str(app.screen.query_one("#lesson-end").render()), 30,
                    "the end line to ask for the rest")
        assert body.scroll_y >= body.max_scroll_y - 1 and not app.screen.is_read
        await pilot.press("g")
        await until(pilot, lambda: body.scroll_y == 0, 30, "the top of the lesson")
        await pilot.press("j", "j", "j")
        await until(pilot, lambda: body.scroll_y == 3, 30, "three lines down")
        await pilot.press("k")
        await until(pilot, lambda: body.scroll_y == 2, 30, "one line back up")
        while body.scroll_y < body.max_scroll_y - 1:
            await pilot.press("space")
            await until(pilot, lambda: app.screen.view_recorded, 30, "the page to be recorded")
        assert app.screen.is_read


async def _open_and_settle(app, pilot, lesson_id):
    """Open a lesson and wait (bounded) until its Markdown is laid out and the position restored."""
    app.open_lesson(lesson_id)
    await until(pilot, lambda: isinstance(app.screen, LessonScreen) and app.screen.position_restored
                and app.screen.examples_filled, 60, f"lesson {lesson_id} to render, restore its place and fill its examples")
    await pilot.pause(0.05)
    return app.screen.query_one("#lesson-body", VerticalScroll)


async def test_lesson_reopens_where_the_learner_left_off(app, busy_in_soak):
    lesson = max(load_lessons(), key=lambda l: len(l.body))
    async with app.run_test(size=(80, 24)) as pilot:
        body = await _open_and_settle(app, pilot, lesson.id)
        assert body.max_scroll_y > 0
        body.scroll_to(y=body.max_scroll_y / 2, animate=False)
        saved = await until(pilot, lambda: 0.3 < app.store.lesson_position(lesson.id) < 0.7 and
                            app.store.lesson_position(lesson.id), 30, "the middle to be saved")
        await pilot.press("escape")
        body = await _open_and_settle(app, pilot, lesson.id)
        assert body.scroll_y == pytest.approx(saved * body.max_scroll_y, abs=2)


async def test_running_a_snippet_shows_its_output(app):
    lesson = next(l for l in load_lessons() if l.snippets())
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_and_settle(app, pilot, lesson.id)  # its snippets mount after the first frame
        await pilot.press("tab")
        snippet = app.screen.query(SnippetBlock).first()
        assert app.focused is snippet
        await pilot.press("enter")
        await until(pilot, lambda: snippet.state not in ("idle", "running"), 60, "the snippet to finish")
        assert snippet.state == "done", snippet.output_text
        assert snippet.output_text and snippet.output_text != "(no output)"


async def test_editing_a_snippet_hides_run_and_reset_clears_a_failure(app):
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    from tui.lessons.snippet import SnippetEditor

    lesson = next(l for l in load_lessons() if l.snippets())
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_and_settle(app, pilot, lesson.id)  # its snippets mount after the first frame
        await pilot.press("tab")
        snippet = app.screen.query(SnippetBlock).first()

        def footer_keys():
            return {k.key for k in app.screen.query_one(Footer).query(FooterKey)}

        await until(pilot, lambda: "enter" in footer_keys(), 30, "the snippet's keys in the footer")
        await pilot.press("e")
        # enter types a line break here
        await until(pilot, lambda: snippet.editing and "enter" not in footer_keys(), 30, "the editor's keys")
        snippet.query_one(SnippetEditor).load_text("raise ValueError('on purpose')")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: snippet.state not in ("idle", "running"), 60, "the snippet to finish")
        assert snippet.state == "failed"
        await pilot.press("escape")
        await pilot.press("x")  # back to the lesson's code: the failure was about other code
        await pilot.pause()
        assert snippet.state == "idle" and not snippet.query_one(".snippet-output").display
        assert "failed" not in str(snippet.query_one(".snippet-title").render())


async def test_lessons_list_opens_and_continues(app):
    lessons = load_lessons()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("l")
        await pilot.pause()
        assert isinstance(app.screen, LessonsScreen)
        await pilot.press("c")  # nothing read yet: continue opens the first lesson
        await pilot.pause()
        assert isinstance(app.screen, LessonScreen) and app.screen.lesson.id == lessons[0].id


async def test_palette_jumps_to_a_lesson(app):
    target = load_lessons()[-1]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*target.title)
        # the palette searches asynchronously: wait for its hits
        await until(pilot, lambda: app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count,
                    30, "the palette's hits")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, LessonScreen), 30, "the lesson to open")
        assert isinstance(app.screen, LessonScreen) and app.screen.lesson.id == target.id


async def test_the_empty_palette_leads_with_the_current_screens_actions(app):
    async with app.run_test(size=(80, 24)) as pilot:
        from tui import navigation

        navigation.open_screen(app, "runs")
        await pilot.pause()
        await pilot.press("ctrl+p")
        await until(pilot, lambda: app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count > 5,
                    30, "the palette's commands")
        command_list = app.screen.query_one(CommandList)
        first = [str(command_list.get_option_at_index(i).prompt) for i in range(3)]
        assert all(line.startswith("Runs:") for line in first), first


async def test_a_lesson_left_before_its_first_frame_leaves_the_app_running(app, busy_in_soak):
    """The lesson mounts most of its blocks after its first frame: when the learner has already
    left by then, the late mount does nothing (and the app keeps running)."""
    lessons = load_lessons()
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(lessons[0].id)
        await pilot.pause()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, LessonScreen) and screen._all_mounted
        # the whole lesson is there once the first frame is out: every block, the first one split
        assert len(screen.query(Markdown)) >= len([b for b in lessons[0].blocks() if b.kind == "markdown"]) + 1
        await pilot.press("escape")
        await pilot.pause()
        await pilot.pause(1.1)  # "last read" is ordered by a timestamp in whole seconds
        app.open_lesson(lessons[2].id)
        await pilot.press("escape")  # left at once, before its position could be restored
        await pilot.pause()
        assert app.store.last_lesson() == lessons[2].id  # still the lesson the list calls last read
        late = LessonScreen(lessons[1])
        late._rest = [Markdown("left behind")]  # what _mount_rest would mount after the first frame
        await late._mount_rest()  # the screen was never shown, or has closed: nothing happens
        assert app.is_running and not isinstance(app.screen, LessonScreen)
        await pilot.press("l", "enter", "escape", "enter", "escape")
        await pilot.pause()
        assert app.is_running


def _help_text(app) -> str:
    return str(app.screen.query_one("#help-body").query("Static").first().render())


async def test_help_lists_the_keys_of_the_screen_it_came_from(app):
    lessons = load_lessons()
    rich = next(l for l in lessons if l.snippets() and l.extra.get("explorers"))
    plain = next(l for l in lessons if not l.snippets() and not l.extra.get("explorers"))
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(rich.id)
        await pilot.pause()
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = _help_text(app)
        assert "Snippet" in text and "Explore" in text and "Help" in text
        await pilot.press("escape")
        assert isinstance(app.screen, LessonScreen)
        await pilot.press("escape")
        app.open_lesson(plain.id)
        await pilot.pause()
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        text = _help_text(app)  # keys that do nothing on this lesson are not offered
        assert "Snippet" not in text and "Explore" not in text and "Help" in text


async def test_help_lists_the_focused_controls_keys(app):
    async with app.run_test(size=(100, 40)) as pilot:
        app.open_area("attention")
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        text = _help_text(app)
        # the matrix has focus: the stepper's keys, then the matrix's cell keys, then the app's
        assert "In the focused matrix" in text and "Cell ↑" in text
        assert text.index("Attention stepper") < text.index("Cell ↑") < text.index("Everywhere")
        assert "Scroll Up" not in text and "Focus Previous" not in text  # Textual's built-ins: summed up once
        # Words for people: no class names, no widget ids.
        assert not re.search(r"\b[A-Z][a-z]{2,}[A-Z][a-z]{2,}\w*\b|#[a-z][a-z-]+", text), text
        body = app.screen.query_one("#help-body")
        await pilot.press("j", "j", "j")
        await pilot.pause()
        assert body.scroll_y == min(3, body.max_scroll_y) and body.max_scroll_y > 0
        await pilot.press("k")
        await pilot.pause()
        assert body.scroll_y == min(2, body.max_scroll_y)


async def test_theme_choice_is_remembered(tmp_path, make_app):
    path = tmp_path / "progress.sqlite3"
    app = make_app(store=Store(path))
    async with app.run_test(size=(80, 24)) as pilot:
        app.theme = "ansi-dark"
        await pilot.pause()
    again = make_app(store=Store(path))
    async with again.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert again.theme == "ansi-dark"


async def test_small_terminal_gets_a_resize_message_then_recovers(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not isinstance(app.screen, TooSmallScreen)
        await pilot.resize_terminal(60, 20)
        await until(pilot, lambda: isinstance(app.screen, TooSmallScreen), 30, "the too-small screen")
        text = str(app.screen.query_one("#too-small-text").render())
        assert "at least 80×24" in text and "60×20" in text
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), 30, "home again")


async def test_lessons_that_name_an_explorer_open_it(app):
    from tui.navigation import EXPLORERS

    known = {e.id for e in EXPLORERS} | {"stepper"}
    lessons = [l for l in load_lessons() if l.extra.get("explorers")]
    assert lessons, "some lessons should link to the explorers"
    for lesson in lessons:
        assert set(lesson.extra["explorers"]) <= known, lesson.id
    target = next(l for l in lessons if l.extra["explorers"][0] != "stepper")
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(target.id)
        await pilot.pause()
        await pilot.press("o")
        await until(pilot, lambda: type(app.screen).__module__.startswith("tui.explorers.explorer_"), 30,
                    "the lesson's explorer")


async def test_sixteen_colour_terminal_gets_ansi_dark_until_the_learner_chooses(tmp_path, monkeypatch, make_app):
    monkeypatch.setenv("TERM", "xterm-16color")
    path = tmp_path / "progress.sqlite3"
    app = make_app(store=Store(path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.theme == "ansi-dark"
    assert Store(path).get_setting("theme") is None  # an automatic choice is not stored


async def test_a_snippet_can_be_edited_run_and_reset(app):
    from tui.lessons.snippet import SnippetEditor

    async with app.run_test(size=(80, 24)) as pilot:
        await _open_and_settle(app, pilot, "four-token-example")
        await pilot.press("tab")
        snippet = app.screen.query(SnippetBlock).first()
        assert app.focused is snippet and "scale=False" in snippet.code
        assert "e: edit" in str(snippet.query_one("#snippet-title").render())
        await pilot.press("e")
        await pilot.pause()
        editor = snippet.query_one(SnippetEditor)
        assert app.focused is editor
        editor.load_text(editor.text.replace("scale=False", "scale=True"))
        await pilot.press("ctrl+s")
        await until(pilot, lambda: snippet.state not in ("idle", "running"), 60, "the snippet to finish")
        assert snippet.state == "done", snippet.output_text
        assert "0.154" in snippet.output_text and "0.124" not in snippet.output_text  # scaled
        assert snippet.edited and "edited" in str(snippet.query_one("#snippet-title").render())
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is snippet and not snippet.editing
        assert isinstance(app.screen, LessonScreen)                   # escape left the editor only
        await pilot.press("x")
        await pilot.pause()
        assert snippet.code == snippet.original and not snippet.edited
        await pilot.press("enter")
        await until(pilot, lambda: snippet.state not in ("idle", "running"), 60, "the snippet to finish")
        assert "0.124" in snippet.output_text                         # the lesson's own version
        editor.load_text("while True:\n    pass\n")                    # edits run bounded too
        await pilot.press("e")
        await pilot.pause()
        editor.load_text("import sys\nprint('boom', file=sys.stderr)\nraise SystemExit(3)\n")
        await pilot.press("ctrl+s")
        await until(pilot, lambda: snippet.state not in ("idle", "running"), 60, "the snippet to finish")
        assert snippet.state == "failed" and "boom" in snippet.output_text


async def test_worked_matrices_are_compact_at_80_by_24(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_and_settle(app, pilot, "four-token-example")
        blocks = {b.example_id: b for b in app.screen.query(ExampleBlock)}
        table = blocks["attention.course.weights"].query_one("MarkdownTable")
        assert table.query_one("MarkdownTableContent").size.height <= 6   # header + 4 rows
        assert table.outer_size.height <= 7                               # and one blank line


async def test_last_read_home_and_continue_point_to_one_lesson(app):
    from tui.common.glance import glance, lesson_to_continue

    lessons = load_lessons()
    ids = [lesson.id for lesson in lessons]
    app.store.save_lesson_position(ids[3], 0.4)
    app.store.save_lesson_position(ids[0], 1.0, reached_end=True)  # the last one opened, and read
    target = lesson_to_continue(app.store, ids)
    assert target == ids[1]  # the first unread lesson, since the last one opened is read
    assert glance(app.store).last_lesson == lessons[1].title  # home's "Continue with"
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("l")
        await pilot.pause()
        marked = [o.id for o in app.screen.query_one(OptionList)._options if "continue" in str(o.prompt)]
        assert marked == [target]
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, LessonScreen) and app.screen.lesson.id == target
