"""Flashcards driven with Pilot: reveal, rate 1-4, undo exactly, suspend, bury, cram, leech,
import/export (and the export's notice without the anki extra), and every answer kept across two
app instances on one database file."""

from __future__ import annotations

import sqlite3
import sys
import zipfile
from datetime import UTC

from textual.widgets import Input, Static

from minigpt.store import Store
from minigpt.study.decks import load_decks
from minigpt.study.review import LEECH_LAPSES, StudySession, history
from tests.helpers.waiting import until
from tui.study.flashcard_files import export_path
from tui.study.flashcards import FlashcardsScreen
from tui.study.study_card import CardView, RatingBar


def _state(store: Store, card_id: str):
    row = store.conn.execute("SELECT * FROM card_state WHERE card_id = ?", (card_id,)).fetchone()
    return dict(row) if row else None


async def _open(app, pilot) -> FlashcardsScreen:
    await pilot.pause()
    await pilot.press("f")
    await pilot.pause()
    assert isinstance(app.screen, FlashcardsScreen)
    return app.screen


def _strip(screen) -> str:
    return str(screen.query_one("#fc-counts", Static).render())


async def test_full_review_session_reveal_rate_undo_suspend_bury(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot)
        s = screen.session
        c = s.counts()
        assert f"New {c.new} · Learning {c.learning} · Due {c.due}" in _strip(screen)
        assert c.new == 20  # the daily new-card limit
        view = screen.query_one(CardView)
        first = screen.current
        assert view.card.id == first and not view.revealed
        await pilot.press("3")  # rating before the answer is shown does nothing
        assert history(app.store) == []
        await pilot.press("space")
        assert view.revealed
        labels = screen.query_one(RatingBar).labels()
        assert labels == {r: f"{r} {t}" for r, t in s.button_labels(first).items()}
        rated = []
        for rating in (1, 2, 3, 4):
            card = screen.current
            if not view.revealed:
                await pilot.press("space")
            await pilot.press(str(rating))
            rated.append(card)
            assert history(app.store, card)[-1]["rating"] == rating
            assert history(app.store, card)[-1]["mode"] == "review"
        assert [h["rating"] for h in history(app.store)] == [1, 2, 3, 4]
        # Undo restores the exact previous state of the last card (here: never answered).
        before_last = _state(app.store, rated[-1])
        assert before_last is not None
        await pilot.press("u")
        assert _state(app.store, rated[-1]) is None
        assert screen.current == rated[-1] and not view.revealed
        assert len(history(app.store)) == 3
        # Rate again, then undo a second answer of a card that had a state: exact row restored.
        await pilot.press("space", "4")
        again = rated[0]  # rated Again: learning, due within minutes
        before = _state(app.store, again)
        s.rate(again, 3)
        await pilot.press("u")
        assert _state(app.store, again) == before
        # Suspend and bury take the card out of the queue.
        target = screen.current
        await pilot.press("s")
        assert s.status(target).suspended and target not in s.queue()
        await pilot.press("u")  # undo the suspension
        assert not s.status(target).suspended
        target = screen.current
        await pilot.press("b")
        assert s.status(target).buried_until is not None and target not in s.queue()
        assert screen.current != target
        assert f"New {s.counts().new} ·" in _strip(screen)


async def test_cram_mode_leaves_the_schedule_untouched(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("space", "3")
        reviewed = history(app.store)[0]["card_id"]
        snapshot = app.store.conn.execute("SELECT * FROM card_state ORDER BY card_id").fetchall()
        opened = screen.session.deck[reviewed].lesson
        app.store.save_lesson_position(opened, 0.2)  # cram takes the cards of lessons opened
        await pilot.press("c")
        assert {screen.session.deck[c].lesson for c in screen.cram_ids} == {opened}
        assert screen.cram and "CRAM" in _strip(screen)
        for _ in range(3):
            await pilot.press("space")
            assert screen.query_one(RatingBar).labels()[3] == "3 Good · cram"
            await pilot.press("1")
        after = app.store.conn.execute("SELECT * FROM card_state ORDER BY card_id").fetchall()
        assert [dict(r) for r in after] == [dict(r) for r in snapshot]
        log = history(app.store)
        assert [h["mode"] for h in log] == ["review", "cram", "cram", "cram"]
        assert log[0]["card_id"] == reviewed
        await pilot.press("c")
        assert not screen.cram and "CRAM" not in _strip(screen)


async def test_a_leech_invites_suspending_it(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot)
        s = screen.session
        card = screen.current
        # Seven lapses already behind it (a card in Review forgotten over and over).
        from datetime import datetime, timedelta
        t = datetime(2025, 1, 1, tzinfo=UTC)
        s.rate(card, 3, now=t)
        while s.status(card).lapses < LEECH_LAPSES - 1:
            t += timedelta(days=60)
            s.rate(card, 4, now=t)
            t += timedelta(days=400)
            s.rate(card, 1, now=t)
        t += timedelta(days=60)
        s.rate(card, 4, now=t)  # back in Review, due long before today
        screen.current = card
        screen.show_current()
        await pilot.press("space", "1")
        leech = screen.query_one("#fc-leech", Static)
        assert leech.display and "Leech" in str(leech.render())
        assert s.status(card).lapses == LEECH_LAPSES
        await pilot.press("l")
        assert s.status(card).suspended and not leech.display


async def test_import_shows_errors_and_export_writes_an_apkg(tmp_path, make_app, monkeypatch):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("i")
        field = screen.query_one("#fc-import-path", Input)
        assert app.focused is field
        bad = tmp_path / "bad.md"
        bad.write_text("A: an answer without a question\n")
        field.value = str(bad)
        await pilot.press("enter")
        assert "without a 'Q:'" in str(screen.query_one("#fc-import-error", Static).render())
        assert field.value == str(bad)  # nothing lost: fix the file, press enter again
        good = tmp_path / "good.md"
        good.write_text("Q: What does W_O do?\nA: Mixes the heads back into d_model.\n")
        field.value = str(good)
        await pilot.press("enter")
        assert not screen.query_one("#fc-import").display
        assert any(c.kind == "user" for c in screen.session.deck)
        with monkeypatch.context() as without_anki:  # the anki extra missing: a one-line notice, no file
            without_anki.setitem(sys.modules, "genanki", None)
            await pilot.press("e")
            await app.workers.wait_for_complete()
            await until(pilot, lambda: any("anki extra" in n.message for n in app._notifications), 10, "the notice")
        notice = next(n for n in app._notifications if "anki extra" in n.message)
        assert notice.message == "✗ exporting an Anki package (.apkg) needs the anki extra: pip install 'minigpt-tutor\\[anki]'"
        assert notice.severity == "error" and not export_path().exists()
        await pilot.press("e")
        await app.workers.wait_for_complete()
        await pilot.pause()
        path = export_path()
        assert path.exists() and screen.last_export.path == path
        assert "Scheduling is not transferred" in screen.last_export.message
        with zipfile.ZipFile(path) as z:
            z.extract("collection.anki2", tmp_path)
        notes = sqlite3.connect(tmp_path / "collection.anki2").execute("SELECT COUNT(*) FROM notes").fetchone()[0]
        assert notes == len(screen.session.deck)


async def test_quit_mid_session_and_reopen_keeps_every_answer(tmp_path, make_app):
    db = tmp_path / "p.sqlite3"
    app = make_app(store=Store(db))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot)
        for rating in (3, 1, 4):
            await pilot.press("space", str(rating))
        answered = [(h["card_id"], h["rating"]) for h in history(app.store)]
        states = {c: _state(app.store, c) for c, _ in answered}
        counts = screen.session.counts()
        await pilot.press("ctrl+q")
    app.store.close()
    again = make_app(store=Store(db))
    async with again.run_test(size=(80, 24)) as pilot:
        screen = await _open(again, pilot)
        assert [(h["card_id"], h["rating"]) for h in history(again.store)] == answered
        assert {c: _state(again.store, c) for c, _ in answered} == states
        assert screen.session.counts() == counts
        assert screen.current not in [c for c, r in answered if r > 1]


async def test_screen_actions_are_in_the_command_palette(tmp_path, make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Cram")
        from textual.command import CommandList, CommandPalette

        def found() -> bool:
            if not isinstance(app.screen, CommandPalette):
                return False
            hits = app.screen.query_one(CommandList)
            return hits.option_count > 0 and hits.highlighted is not None

        await until(pilot, found, 15, "the palette to find the command")
        await pilot.press("enter")
        await until(pilot, lambda: app.screen is screen and screen.cram, 15, "cram mode")


def _glance_count(app) -> int:
    import re

    text = str(app.screen.query_one("#glance", Static).render())
    return int(re.search(r"Cards to study (\d+)", text).group(1))


def _strip_counts(screen) -> tuple[int, int, int]:
    import re

    m = re.search(r"New (\d+) · Learning (\d+) · Due (\d+)", _strip(screen))
    return tuple(int(x) for x in m.groups())


async def test_counts_agree_across_home_flashcards_and_stats_and_follow_bury_and_suspend(tmp_path, make_app):
    from tui.study.study_stats import StudyStatsScreen

    store = Store(tmp_path / "p.sqlite3")
    StudySession(store, load_decks()).set_new_per_day(1000)   # every new card counts (no cap)
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        home = _glance_count(app)
        screen = await _open(app, pilot)
        assert sum(_strip_counts(screen)) == home == len(screen.session.deck)
        shown = []
        for key in ("b", "s"):                   # bury one card, suspend the next
            shown.append(screen.current)
            before = sum(_strip_counts(screen))
            await pilot.press(key)
            await pilot.pause()
            assert sum(_strip_counts(screen)) == before - 1   # at once, on the same screen
            assert screen.current not in shown
        await pilot.press("space", "3")          # one answer: still counted (learning later)
        await pilot.pause()
        after = sum(_strip_counts(screen))
        await pilot.press("escape")
        await pilot.pause()
        assert _glance_count(app) == after
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, StudyStatsScreen)
        now = str(app.screen.query_one("#stats-now", Static).render())
        assert f"To study now {after}:" in now


async def test_siblings_never_follow_each_other_and_no_ids_on_cards(tmp_path, make_app):
    store = Store(tmp_path / "p.sqlite3")
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot)
        deck = screen.session.deck
        seen = []
        for _ in range(20):
            if screen.current is None:
                break
            seen.append(screen.current)
            kind = str(screen.query_one("#card-kind", Static).render())
            assert screen.current not in kind and "." not in kind.replace("…", "")
            await pilot.press("space", "1")
            await pilot.pause()
        notes = [deck[c].note_id for c in seen]
        assert len(seen) >= 15 and all(a != b for a, b in zip(notes, notes[1:]))


async def test_undo_in_one_window_leaves_the_other_windows_answer(tmp_path, make_app):
    path = tmp_path / "p.sqlite3"
    app = make_app(store=Store(path))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot)
        mine = screen.current
        await pilot.press("space", "3")
        await pilot.pause()
        from minigpt.study.review import StudySession

        other = StudySession(Store(path), screen.session.deck)   # a second app instance
        theirs = next(c.id for c in screen.session.deck if c.id != mine and c.kind == "question")
        other.rate(theirs, 4)
        await pilot.press("u")
        await pilot.pause()
        assert screen.current == mine and history(app.store, mine) == []
        assert [r["rating"] for r in history(app.store, theirs)] == [4]
        await pilot.press("u")                   # nothing more of this window's to undo
        await pilot.pause()
        assert [r["rating"] for r in history(app.store, theirs)] == [4]


async def test_learning_cards_are_counted_and_learned_ahead_and_the_empty_screen_has_no_dead_keys(tmp_path, make_app):
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    store = Store(tmp_path / "p.sqlite3")
    StudySession(store, load_decks()).set_new_per_day(2)
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot)
        bar = screen.query_one(RatingBar)
        assert not bar.visible  # no "1 2 3 4" before the answer
        await pilot.press("space")
        assert bar.visible
        await pilot.press("1")  # Again: learning, due in a minute
        await pilot.press("space", "3")  # Good: learning, due in 10 minutes
        await pilot.pause()
        assert "Learning 2" in _strip(screen)
        assert screen.current is not None  # learned ahead, not "nothing to study"
        for _ in range(6):  # Easy until every card has left learning
            if screen.current is None:
                break
            await pilot.press("space", "4")
            await pilot.pause()
        assert screen.current is None
        front = str(screen.query_one("#card-front", Static).render())
        assert "Nothing to study right now" in front and "comes due" in front
        keys = {k.key for k in screen.query_one(Footer).query(FooterKey)}
        assert not keys & {"space", "s", "1"}, keys
