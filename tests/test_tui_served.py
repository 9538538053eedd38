"""The app as a served session sees it (the environment ``minigpt serve`` gives each tab), with Pilot:
edited code refused, typed paths fenced, and the guest notice. The browser tests drive the same
rules through a real page; these also run where no Chromium is installed."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Input, Static

from minigpt import serving_policy
from minigpt.lessons import load_lessons
from minigpt.runs import listing
from tests.helpers.waiting import until
from tui.browser.serve_session import GUEST_NOTICE, ServedTutorApp
from tui.lessons.snippet import SnippetBlock


@pytest.fixture
def served(monkeypatch, tmp_path):
    monkeypatch.setenv(serving_policy.ENV_SERVED, "1")
    monkeypatch.setenv(serving_policy.ENV_STATE_DIR, str(tmp_path / "serve-state"))
    for name in (serving_policy.ENV_ALLOW_CODE, serving_policy.ENV_ALLOW_FILES, serving_policy.ENV_GUEST):
        monkeypatch.delenv(name, raising=False)


class OneSnippet(App):
    def __init__(self, code: str):
        super().__init__()
        self.code = code

    def compose(self) -> ComposeResult:
        yield SnippetBlock(self.code, 0)


async def _run(code: str) -> SnippetBlock:
    app = OneSnippet(code)
    async with app.run_test() as pilot:
        block = app.query_one(SnippetBlock)
        block.focus()
        await pilot.press("enter")
        await until(pilot, lambda: block.state not in ("idle", "running"), 30, "the snippet to finish")
        block.shown = str(block.query_one(".snippet-output", Static).render())
    return block


async def test_an_edited_snippet_is_refused_and_nothing_runs(served, tmp_path):
    witness = tmp_path / "ran.txt"
    snippet = next(s for lesson in load_lessons() for s in lesson.snippets())
    block = await _run(snippet + f"\nopen({str(witness)!r}, 'w').write('ran')")
    assert block.state == "failed"
    assert "Edited code does not run here" in block.shown and "--allow-code" in block.shown
    assert not witness.exists()


async def test_allow_code_runs_the_edited_snippet(served, monkeypatch, tmp_path):
    monkeypatch.setenv(serving_policy.ENV_ALLOW_CODE, "1")
    witness = tmp_path / "ran.txt"
    block = await _run(f"open({str(witness)!r}, 'w').write('ran'); print('edited ran')")
    assert block.state == "done" and "edited ran" in block.shown
    assert witness.read_text() == "ran"


async def test_a_training_data_path_outside_the_fence_is_refused_before_it_is_read(served, tmp_path, make_app):
    outside = tmp_path / "outside-names.txt"
    outside.write_text("anna\nbob\n", encoding="utf-8")
    app = make_app(app_class=ServedTutorApp)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("t")
        await pilot.pause()
        form = app.screen.form
        form.query_one("#f-data", Input).value = str(outside)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "outside this server's folders" in form.error_text
        assert form.query_one("#f-data").has_class("-invalid")
        assert app.screen.mode == "form" and listing.list_runs() == []


async def test_a_card_import_outside_the_fence_is_refused(served, tmp_path, make_app):
    cards = tmp_path / "cards.md"
    cards.write_text("Q: Outside?\nA: Yes.\n", encoding="utf-8")
    app = make_app(app_class=ServedTutorApp)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()
        await pilot.press("i")
        app.screen.query_one("#fc-import-path", Input).value = str(cards)
        await pilot.press("enter")
        await pilot.pause()
        error = str(app.screen.query_one("#fc-import-error", Static).render())
        assert "outside this server's folders" in error
        assert app.store.conn.execute("SELECT COUNT(*) FROM user_cards").fetchone()[0] == 0


async def test_a_guest_is_told_that_nothing_is_kept(served, monkeypatch, tmp_path, make_app):
    monkeypatch.setenv(serving_policy.ENV_GUEST, "1")
    app = make_app(app_class=ServedTutorApp)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert any(GUEST_NOTICE in str(n.message) for n in app._notifications)
