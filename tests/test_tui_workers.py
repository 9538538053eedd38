"""A failing background worker shows a message and leaves the app running (tui.workers)."""

from __future__ import annotations

import asyncio

from minigpt import paths
from minigpt.lessons import load_lessons
from tests.helpers.waiting import until
from tui.widgets.snippet import SnippetBlock


async def _wait(pilot, condition, seconds: float = 15.0) -> bool:
    try:
        await until(pilot, condition, seconds, "the condition", 0.1)
    except AssertionError:
        return bool(condition())
    return True


def _error_notes(app) -> list[str]:
    return [str(n.message) for n in app._notifications if n.severity == "error"]


async def test_a_thread_worker_that_raises_is_reported_and_the_app_keeps_running(tmp_path, monkeypatch, make_app):
    import tui.screens.playground as pg

    def boom(*_args, **_kwargs):
        raise RuntimeError("injected failure in the loader")

    monkeypatch.setattr(pg, "load_for_playground", boom)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_area("playground")
        assert await _wait(pilot, lambda: any("injected failure" in m for m in _error_notes(app)))
        assert app.is_running
        await pilot.press("escape")  # the app still answers keys
        await pilot.pause()
        assert app.is_running
    log = (paths.user_data_dir() / "app.log").read_text()
    assert "injected failure in the loader" in log and "Traceback" in log


async def test_an_async_worker_that_raises_is_reported_and_the_app_keeps_running(tmp_path, monkeypatch, make_app):
    import tui.widgets.snippet as snippet_module

    def boom(_code, **_options):
        raise OSError("injected failure starting python")

    # The snippet runs the lessons' bounded runner in a guarded background worker.
    monkeypatch.setattr(snippet_module, "run_snippet", boom)
    lesson = next(lesson for lesson in load_lessons() if lesson.snippets())
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson(lesson.id)
        await pilot.pause()
        snippet = app.screen.query(SnippetBlock).first()
        snippet.action_run()
        assert await _wait(pilot, lambda: any("injected failure" in m for m in _error_notes(app)))
        await asyncio.sleep(0)
        assert app.is_running
    assert "injected failure starting python" in (paths.user_data_dir() / "app.log").read_text()
