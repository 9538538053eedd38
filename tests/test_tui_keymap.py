"""The learner's keys in the running app: a key remapped in the settings store works, the old one no
longer does, and the footer, the help screen, the palette and the home list name the new one."""

from __future__ import annotations

import re

from textual.widgets import Footer, OptionList
from textual.widgets._footer import FooterKey

from minigpt import settings
from minigpt.serving_policy import ENV_SERVED
from minigpt.store import Store
from tests.helpers.waiting import until
from tui import keymap
from tui.common.screen_commands import screen_commands
from tui.home.help import HelpScreen
from tui.home.home import HomeScreen
from tui.lessons.lessons import LessonsScreen


def _store(tmp_path, **keys) -> Store:
    store = Store(tmp_path / "progress.sqlite3")
    for binding_id, text in keys.items():
        settings.set(store, settings.KEYS.of(binding_id.replace("__", ".")), text)
    return store


def _footer_keys(screen) -> set[tuple[str, str]]:
    return {(k.key, k.description) for k in screen.query_one(Footer).query(FooterKey)}


async def test_a_remapped_key_runs_its_action_and_the_old_key_no_longer_does(tmp_path, make_app):
    app = make_app(store=_store(tmp_path, home__lessons="j", home__study_weakest="v", lessons__continue="o"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        home = app.screen
        assert isinstance(home, HomeScreen)
        await pilot.press("l")  # the default key, given away
        await pilot.pause()
        assert app.screen is home
        assert ("v", "Study weakest") in _footer_keys(home) and ("w", "Study weakest") not in _footer_keys(home)
        listed = home.query_one("#area-list", OptionList).get_option_at_index(0).prompt
        assert str(listed).startswith("[b]j[/b]  Lessons")  # the list prints each area's key
        palette = {title: help_text for title, help_text, _run in screen_commands(home)}
        assert palette["Home: Study weakest"] == "key v"
        await pilot.press("j")
        await pilot.pause()
        assert isinstance(app.screen, LessonsScreen)
        assert "o: continue where you left off" in str(app.screen.query_one("#lessons-summary").render())


async def test_help_shows_the_learners_key(tmp_path, make_app):
    app = make_app(store=_store(tmp_path, home__lessons="j"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-body").query("Static").first().render())
        assert re.search(r"^\s+j\s+Lessons$", text, re.M), text
        assert not re.search(r"^\s+l\s+Lessons$", text, re.M)


async def test_a_bad_stored_keymap_is_reported_once_and_left_out_not_a_crash(tmp_path, make_app):
    store = _store(tmp_path, home__flashcards="g")
    store.set_setting("keys.nope.nope", "j")            # an id no binding has (an older version's)
    store.set_setting("keys.home.lessons", "w")         # the key of "Study weakest"
    store.set_setting("keys.home.quiz", "a,,b")         # not a list of keys
    app = make_app(store=store)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: not app.workers._workers and app._stored_keymap == {"home.flashcards": "g"},
                    30, "the keymap's check")
        notices = [n for n in app._notifications if n.title == "Keys left at their defaults"]
        assert notices and all("\n" not in n.message for n in notices)
        await pilot.press("l")  # home.lessons is left at its default
        await pilot.pause()
        assert isinstance(app.screen, LessonsScreen)


async def test_a_browser_tab_replaces_the_keys_the_browser_keeps(tmp_path, make_app, monkeypatch):
    monkeypatch.setenv(ENV_SERVED, "1")
    app = make_app(store=_store(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        active = app.screen.active_bindings
        assert "ctrl+q" not in active and "ctrl+t" not in active
        assert active[keymap.SERVED_KEYS["app.quit"]].binding.action in ("quit", "app.quit")
        assert active[keymap.SERVED_KEYS["app.theme"]].binding.action == "change_theme"
        app.open_area("interview")  # skip is ctrl+n in a terminal (a new window in a browser)
        await until(pilot, lambda: "escape" in app.screen.active_bindings, 30, "the interview's keys")
        # The screen's keys after the keymap, whether or not a question is up yet (the footer's source).
        bound = {key: b.action for node, bindings in app.screen._binding_chain if node is app.screen
                 for key, found in bindings.key_to_bindings.items() for b in found}
        assert bound[keymap.SERVED_KEYS["interview.skip"]] == "skip"
        assert not set(bound) & keymap.BROWSER_KEPT, set(bound)
