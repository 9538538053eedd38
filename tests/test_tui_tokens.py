"""The tokens explorer, driven at 80×24: opened from the tokenization lesson and the palette,
typing updates every vocabulary size, unknown characters are flagged, not a crash."""

from __future__ import annotations

from textual.command import CommandList
from textual.widgets import Input

from minigpt.teaching.bpe import UNKNOWN_ID
from minigpt.teaching.examples.tokenization import EXPLORER_MERGES, explorer_bpe
from tests.helpers.waiting import until
from tui.lessons.lesson import LessonScreen


async def _wait_trained(pilot, screen):
    await until(pilot, lambda: screen.rows, 30, "the tokenizer to finish training")


async def test_lesson_key_opens_the_explorer_and_typing_retokenizes(app):
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_lesson("tokenization")
        await pilot.pause()
        assert isinstance(app.screen, LessonScreen)
        await pilot.press("o")
        await until(pilot, lambda: type(app.screen).__name__ == "TokensExplorerScreen", 30, "the tokens explorer")
        screen = app.screen
        await _wait_trained(pilot, screen)
        box = screen.query_one("#tok-text", Input)
        box.value = ""
        await pilot.press(*"the keys")
        await until(pilot, lambda: screen.rows and "".join(screen.rows[0].tokens) == "the keys", 10,
                    "the rows of what was typed")
        bpe = explorer_bpe()
        rows = screen.rows
        assert [r.vocab_size for r in rows] == [len(bpe.truncated(n).vocab) for n in EXPLORER_MERGES]
        assert "".join(rows[0].tokens) == "the keys" and len(rows[0].tokens) == 8  # characters
        assert len(rows[-1].tokens) < len(rows[0].tokens)  # merges shorten it
        assert rows[-1].ids == bpe.encode("the keys")
        shown = str(screen.query_one("#tok-rows").render())
        assert f"vocabulary {rows[-1].vocab_size:,}" in shown
        assert screen.query_one("#tok-rows").region.right <= 80


async def test_unknown_characters_are_flagged_not_fatal(app):
    async with app.run_test(size=(80, 24)) as pilot:
        from tui import navigation

        screen = navigation.open_screen(app, "explorer.tokens")
        await _wait_trained(pilot, screen)
        screen.query_one("#tok-text", Input).value = "€5 ☃"
        await until(pilot, lambda: screen.rows and UNKNOWN_ID in screen.rows[0].ids, 10, "the rows of the new text")
        assert UNKNOWN_ID in screen.rows[0].ids
        assert "☃" in screen.rows[0].unknown
        assert "not in the training text" in str(screen.query_one("#tok-rows").render())
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.rows and not screen.rows[0].unknown, 10, "the sample text's rows")
        assert not screen.rows[0].unknown  # the sample text is fully known


async def test_palette_finds_the_new_lessons_by_name(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"byte-pair")
        await until(pilot, lambda: app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count,
                    30, "the palette's hits")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, LessonScreen), 30, "the lesson to open")
        assert isinstance(app.screen, LessonScreen) and app.screen.lesson.id == "tokenization"


async def test_a_failing_tokenizer_is_reported_and_the_app_keeps_running(app, monkeypatch):
    import minigpt.teaching.examples.tokenization as tokenization

    def boom():
        raise RuntimeError("injected failure in training")

    monkeypatch.setattr(tokenization, "explorer_bpe", boom)
    async with app.run_test(size=(80, 24)) as pilot:
        from tui import navigation

        navigation.open_screen(app, "explorer.tokens")
        await until(pilot, lambda: any("injected failure" in str(n.message) for n in app._notifications), 30,
                    "the worker's failure notice")
        assert app.is_running
        app.screen.query_one("#tok-text", Input).value = "still typing"  # no crash without a tokenizer
        await pilot.pause()
        assert app.screen.rows == []
