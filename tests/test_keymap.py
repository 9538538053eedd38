"""Keys by binding id (tui.keymap): every binding has an id, a remap is checked before it is stored,
and a browser tab gets keys the browser lets through."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from textual.binding import Binding

from minigpt import settings
from minigpt.cli.main import main as headless_main
from minigpt.store import Store
from tui import keymap
from tui.app import TutorApp
from tui.cli import main

ID = re.compile(r"[a-z][a-z0-9_]*\.[a-z0-9_]+")


def test_every_binding_of_the_app_has_one_id_of_its_own():
    seen: dict[str, Binding] = {}
    classes = keymap.binding_classes(TutorApp)
    assert len(classes) > 40  # the app, every screen and every widget that declares keys
    for cls in classes:
        for b in cls.__dict__["BINDINGS"]:
            assert isinstance(b, Binding), f"{cls.__name__}: {b!r} is a tuple: write Binding(..., id=...)"
            assert b.id and ID.fullmatch(b.id), f"{cls.__name__}: {b.action!r} has no dotted id ({b.id!r})"
            # The same id twice only where one declaration is shared (the explorers' model key).
            assert seen.setdefault(b.id, b) is b, f"{b.id} names two bindings ({cls.__name__})"


@pytest.mark.parametrize(("typed", "named"), [
    ("ctrl+J", "ctrl+j"), ("?", "question_mark"), ("F5", "f5"), ("shift+ctrl+up", "ctrl+shift+up"),
    ("G", "G"), (" j , f5 ", "j,f5"), ("[", "left_square_bracket"), ("comma", "comma"), ("j,j", "j")])
def test_keys_are_named_as_textual_names_them(typed, named):
    assert keymap.normalise_keys(typed) == named


@pytest.mark.parametrize("typed", ["", " ", ",", "j,", "ctrl+", "kontrol+x", "ctrl+ctrl+a", "ctrl+foo",
                                   "latin_small_letter_x", "\x1b", "ctrl+j k"])
def test_a_key_textual_has_no_name_for_is_refused_in_one_line(typed):
    with pytest.raises(keymap.KeymapError) as caught:
        keymap.normalise_keys(typed)
    assert "\n" not in str(caught.value)


def test_hostile_text_gets_a_short_line_naming_it_visibly(tmp_path):
    for typed in ["j" * 100_000, "ctrl+\x1b[31m", "\u202ej", "f5,\x00"]:
        result = _cli(tmp_path, "settings", "set", "keys.quiz.hint", typed)
        assert result.exit_code == 2 and result.output.count("\n") == 1 and len(result.output) < 300, result.output
        assert "\x1b" not in result.output and "\x00" not in result.output
    long_id = _cli(tmp_path, "settings", "set", "keys." + "x." * 50_000, "j")
    assert long_id.exit_code == 2 and long_id.output.count("\n") == 1 and len(long_id.output) < 300


def test_clashes_where_both_keys_work_are_refused_and_swaps_and_the_defaults_own_sharing_are_not():
    def problems(km):
        return [line for _id, line in keymap.keymap_problems(km, TutorApp)]

    [line] = problems({"quiz.submit": "r"})
    assert line == "keys.quiz.submit: r is already quiz.again where quiz.submit works; give one of them another key"
    assert problems({"quiz.submit": "question_mark"}) == [  # the app's keys work on every screen
        "keys.quiz.submit: question_mark is already app.help where quiz.submit works; give one of them another key"]
    assert "Textual's app.focus_next" in problems({"quiz.submit": "tab"})[0]  # Textual's own keys count
    assert problems({"quiz.again": "v", "quiz.review_missed": "r"}) == []  # a swap
    assert problems({"lesson.open_experiments": "x"}) == []  # x is also the lab job's: chosen by check_action
    assert problems({"quiz.submit": "ctrl+j", "lessons.open": "ctrl+j"}) == []  # different screens
    assert problems({"quiz.nope": "j"}) == ["keys.quiz.nope: no key of the app has the id 'quiz.nope' "
                                            "(`minigpt keys` lists them)"]


def test_a_keymap_with_bad_entries_keeps_the_good_ones():
    usable, dropped = keymap.usable_keymap(
        {"quiz.submit": "ctrl+j", "quiz.hint": "r", "nope.nope": "j", "quiz.flag": "ctrl+foo"}, TutorApp)
    assert usable == {"quiz.submit": "ctrl+j"}
    assert len(dropped) == 3 and all(line.startswith("keys.") for line in dropped)


def test_a_browser_tab_gets_keys_the_browser_lets_through():
    defaults = keymap.catalogue(TutorApp)
    kept = {i for i, b in defaults.items() if set(keymap.keys_of(b)) & keymap.BROWSER_KEPT}
    assert kept == set(keymap.SERVED_KEYS)  # every default the browser would take has a served key
    served = keymap.served_keymap({})
    assert served == keymap.SERVED_KEYS and not set(served.values()) & keymap.BROWSER_KEPT
    assert keymap.keymap_problems(served, TutorApp) == []  # the served keys clash with nothing
    # The learner's keys: a browser key is left out; none left, the served key or the default.
    assert keymap.served_keymap({"quiz.submit": "f4,ctrl+w"})["quiz.submit"] == "f4"
    assert "quiz.submit" not in keymap.served_keymap({"quiz.submit": "ctrl+w"})
    assert keymap.served_keymap({"app.quit": "ctrl+w"})["app.quit"] == keymap.SERVED_KEYS["app.quit"]
    assert keymap.served_keymap({"app.quit": "ctrl+x"})["app.quit"] == "ctrl+x"


def _cli(data_dir, *args, group=main):
    return CliRunner().invoke(group, ["--data-dir", str(data_dir), *args])


def test_settings_set_stores_a_remap_and_refuses_a_clash_in_one_line(tmp_path):
    ok = _cli(tmp_path, "settings", "set", "keys.quiz.submit", "Ctrl+J")
    assert ok.exit_code == 0 and ok.output == "keys.quiz.submit = ctrl+j\n"
    clash = _cli(tmp_path, "settings", "set", "keys.quiz.hint", "ctrl+j")
    assert clash.exit_code == 2
    assert clash.output == ("Error: keys.quiz.hint: ctrl+j is already quiz.submit where quiz.hint works; "
                            "give one of them another key\n")
    for bad, why in [("keys.nope.nope", "no key of the app has the id"), ("keys.quiz.hint", "is not a key")]:
        result = _cli(tmp_path, "settings", "set", bad, "ctrl+foo" if bad == "keys.quiz.hint" else "j")
        assert result.exit_code == 2 and why in result.output and result.output.count("\n") == 1
    # Setting an id again replaces its keys (its own old key is no clash).
    assert _cli(tmp_path, "settings", "set", "keys.quiz.submit", "ctrl+j,f4").exit_code == 0
    # The headless command cannot check keys: it refuses rather than store them unchecked.
    headless = _cli(tmp_path, "settings", "set", "keys.quiz.hint", "f3", group=headless_main)
    assert headless.exit_code == 2 and "the `minigpt` command" in headless.output
    store = Store(tmp_path / "progress.sqlite3")
    try:
        assert settings.members(store, settings.KEYS) == ({"quiz.submit": "ctrl+j,f4"}, [])
    finally:
        store.close()
    assert _cli(tmp_path, "settings", "clear", "keys.quiz.submit").exit_code == 0
    listing = _cli(tmp_path, "keys")
    assert listing.exit_code == 0 and re.search(r"^quiz\.submit +ctrl\+s +Submit$", listing.output, re.M)


def test_settings_reads_and_writes_the_other_settings_by_key(tmp_path):
    assert _cli(tmp_path, "settings", "get", "study.new_per_day").output == "20\n"
    assert _cli(tmp_path, "settings", "set", "study.new_per_day", "35").output == "study.new_per_day = 35\n"
    assert _cli(tmp_path, "settings", "set", "study.new_from_read_lessons", "yes").exit_code == 0
    assert _cli(tmp_path, "settings", "get", "study.new_from_read_lessons").output == "1\n"
    refused = _cli(tmp_path, "settings", "set", "study.new_per_day", "lots")
    assert refused.exit_code == 2 and "must be a whole number of at least 0" in refused.output
    unknown = _cli(tmp_path, "settings", "set", "nope", "1")
    assert unknown.exit_code == 2 and "no setting is called 'nope'" in unknown.output
    assert "study.new_per_day = 35" in _cli(tmp_path, "settings", "list").output
