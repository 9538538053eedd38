"""A kata passed yesterday in the app: marked due on the katas list, opened on the blank stub in a
scratch buffer, rated when passed, the saved draft untouched and shown after. The grader's verdicts
are given (a named mistake, then a pass): grading itself has its own tests."""

from __future__ import annotations

from datetime import timedelta

from textual.app import App
from textual.widgets import Static, TextArea

from minigpt.katas import history
from minigpt.katas.catalogue import kata_by_name
from minigpt.katas.grading import Failure, Report
from minigpt.store import Store
from minigpt.study import kata_cards, scheduler
from tests.helpers.waiting import until
from tui import navigation

DRAFT = "# my first solution, kept\n"


class Host(App):
    """The katas list alone on a real progress file (the whole app's start is not what is tested)."""

    def __init__(self, store):
        super().__init__()
        self.store = store

    def on_mount(self) -> None:
        navigation.open_screen(self, "katas")


async def test_a_due_kata_is_resolved_from_the_stub_without_touching_the_draft(tmp_path, monkeypatch):
    app = Host(Store(tmp_path / "progress.sqlite3"))
    verdicts = iter([Report("softmax", 5, [Failure("a row", "x", "p", "q", "row 0", "the max was not subtracted")]),
                     Report("softmax", 5)])
    monkeypatch.setattr("minigpt.katas.sandbox.grade_source", lambda kata, code, **kw: next(verdicts))
    yesterday = scheduler.utc_now() - timedelta(days=1)
    history.record_attempt(app.store, "softmax", passed=True, cases_failed=0, cases_total=5)
    history.save_draft(app.store, "softmax", DRAFT)
    kata_cards.rate(app.store, "softmax", 3, why="first pass", now=yesterday)  # the pass, a day ago
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await until(pilot, lambda: navigation.is_screen(app.screen, "katas") and app.screen.due, 30, "the list")
        await pilot.pause()
        assert "1 due" in str(app.screen.query_one("#katas-summary", Static).render())
        first = app.screen.query_one("#kata-list").get_option_at_index(0)
        assert first.id == "softmax" and "⟳" in str(first.prompt)  # due katas come first
        await pilot.press("enter")
        await until(pilot, lambda: navigation.is_screen(app.screen, "kata"), 30, "the kata")
        await pilot.pause()
        screen = app.screen
        editor = screen.query_one(TextArea)
        assert editor.text == kata_by_name("softmax").stub and screen.resolving
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.report is not None, 30, "the first grading")
        await pilot.pause()
        assert screen.resolve.rating is None and screen.resolve.named_mistake  # not rated before the end
        editor.load_text(kata_by_name("softmax").solution)
        screen.report = None
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.report is not None, 30, "the second grading")
        await pilot.pause()
        assert screen.resolve.rating == 1  # the named mistake on the way: Again
        assert history.record(app.store, "softmax").draft == DRAFT  # the scratch buffer saved nothing
        assert DRAFT.strip() in screen.extra_text and "re-solve rated Again" in str(
            screen.query_one("#kata-status", Static).render())
        assert not kata_cards.card(app.store, "softmax").is_due()
        assert [r["why"] for r in kata_cards.history(app.store, "softmax")] == ["first pass", "named mistake"]
