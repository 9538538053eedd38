"""Terminal strings in the app: driven with Pilot, the rendered screen read back as text.

Each test puts hostile text where a file or a model supplies it (a run folder's name, a status
file's error, generated names, an imported card, a snippet's output) and checks that no control
character is drawn or written, while the text itself is still shown, made visible.
"""

from __future__ import annotations

from textual.app import App
from textual.widgets import DataTable

from minigpt.store import Store
from minigpt.study.anki import import_file, user_card_id
from tests.helpers.hostile import BROKEN_RUN, EVIL_RUN, assert_screen_safe
from tests.helpers.waiting import until
from tui import navigation
from tui.lessons.snippet import SnippetBlock
from tui.playground.playground import PlaygroundScreen


async def settle(pilot, rounds: int = 3) -> None:
    for _ in range(rounds):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def test_home_runs_and_failed_run_panel(tmp_path, evil_user_runs, quick_decks, make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert_screen_safe(app, contains="Last run")  # runs are named by their settings now
        navigation.open_screen(app, "runs")
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        for folder, shown in ((BROKEN_RUN, "(broken␛]52;c;cHduZWQ=␇)"), (EVIL_RUN, "(names␛]0;pwned␇␛[2J)")):
            table.move_cursor(row=table.get_row_index(str(evil_user_runs / folder)))
            await settle(pilot)
            assert_screen_safe(app, contains=shown)  # the detail line names the run's folder
        table.move_cursor(row=table.get_row_index(str(evil_user_runs / BROKEN_RUN)))
        await pilot.press("enter")
        await settle(pilot)
        assert_screen_safe(app, contains="boom␛]52;c;cHduZWQ=␇\\x9b2J")


async def test_playground_names_and_checkpoint_label(tmp_path, evil_user_runs, quick_decks, make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(PlaygroundScreen(checkpoints_dir=tmp_path / "none", runs_root=evil_user_runs))
        await settle(pilot)
        screen = app.screen
        assert screen.batch is not None and any("\x1b" in s.text for s in screen.batch.samples)
        assert_screen_safe(app, contains="␛")


async def test_imported_card_text(tmp_path, quick_decks, make_app):
    cards = tmp_path / "cards.md"
    cards.write_text("Q: front \x1b]52;c;cHduZWQ=\x07 [b]x[/] ends with \\\nA: back \x9b2J \x1b]0;t\x07\n",
                     encoding="utf-8")
    store = Store(tmp_path / "p.sqlite3")
    (card_id,) = import_file(store, cards, "mine")
    assert card_id == user_card_id("mine", store.conn.execute("SELECT front FROM user_cards").fetchone()[0])
    app = make_app(store=store)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f")
        await settle(pilot)
        screen = app.screen
        screen.current = card_id
        screen.show_current()
        await pilot.press("space")
        await settle(pilot)
        text = assert_screen_safe(app, contains="front ␛]52;c;cHduZWQ=␇ [b]x[/] ends with \\")
        assert "back \\x9b2J ␛]0;t␇" in text


class _SnippetApp(App):
    def __init__(self, code: str):
        super().__init__()
        self.code = code

    def compose(self):
        yield SnippetBlock(self.code, 0)


async def test_snippet_output():
    code = "print('\\x1b]52;c;cHduZWQ=\\x07 title \\x1b]0;x\\x07 \\x9b2J\\r spoof', flush=True)"
    app = _SnippetApp(code)
    async with app.run_test(size=(100, 20)) as pilot:
        block = app.query_one(SnippetBlock)
        block.focus()
        await pilot.press("enter")
        await until(pilot, lambda: block.state != "running", 10, "a bare interpreter to print a line")
        assert block.state == "done", block.state
        assert_screen_safe(app, contains="␛]52;c;cHduZWQ=␇ title ␛]0;x␇ \\x9b2J␍ spoof")
