"""Invisible and direction-changing characters (issue 44 item 8): printable() passed U+200F (named a
round earlier), U+200B, U+2060, U+FEFF, U+2062, U+FFF9, U+061C and the tag characters, so
`minigpt rename RUN $'n\\u200fx'` and `runs` printed them raw. Every format character (Unicode
category Cf) is now made visible in listings, paths and echoes; displayed prose keeps the two
joiners scripts and emoji need."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from click.testing import CliRunner

from minigpt.cli import main
from minigpt.text import PROSE_JOINERS, has_control, markup_escape, printable
from tests.helpers.run_fixtures import write_run

NAMED = ["\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u2060", "\u2061", "\u2062", "\u2063", "\u2064",
         "\ufeff", "\u061c", "\ufff9", "\ufffa", "\ufffb", "\u00ad", "\u180e", "\u206a", "\u2066",
         "\U000e0000", "\U000e0001", "\U000e0041", "\U000e007f", "\U0001d173", "\U00013430"]


@pytest.mark.parametrize("ch", NAMED, ids=[f"U+{ord(c):04X}" for c in NAMED])
def test_each_named_invisible_character_is_made_visible(ch):
    shown = printable(f"a{ch}b")
    assert ch not in shown and shown.startswith("a\\") and shown.endswith("b")
    assert has_control(f"a{ch}b")


def test_every_format_character_of_this_unicode_is_made_visible():
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf")
    shown = printable(every)
    assert not any(unicodedata.category(c) == "Cf" for c in shown), shown
    assert shown.count("\\") == len(every)  # one escape each, nothing dropped


def test_a_tag_character_shows_as_its_full_code_point():
    assert printable("\U000e0041") == "\\U000e0041"
    assert printable("\u200f") == "\\u200f"


def test_prose_keeps_the_joiners_and_nothing_else():
    persian = "می\u200cخواهم"  # ZWNJ inside a Persian word
    technologist = "\U0001f469\u200d\U0001f4bb"  # woman, ZWJ, laptop: one emoji
    assert printable(persian, prose=True) == persian
    assert printable(technologist, prose=True) == technologist
    assert markup_escape(technologist, prose=True) == technologist
    assert printable("a\u200fb\u200bc\ufeff", prose=True) == "a\\u200fb\\u200bc\\ufeff"
    assert set(PROSE_JOINERS) == {"\u200c", "\u200d"}
    assert printable(persian) != persian  # a listing or a path shows even the joiners


def test_emoji_with_variation_selectors_are_left_alone():
    for text in ("\u2764\ufe0f", "\U0001f44d\U0001f3fd", "e\u0301"):  # VS16, skin tone, combining accent
        assert printable(text) == text


def test_rename_and_runs_echo_the_marks_escaped(isolated_data_dir):
    write_run(isolated_data_dir / "runs", "r1")
    runner = CliRunner()
    result = runner.invoke(main, ["rename", "r1", "n\u200fx", "--note", "a\u200bb\u2066c"])
    assert result.exit_code == 0, result.output
    assert "n\\u200fx" in result.output and "a\\u200bb\\u2066c" in result.output
    listing = runner.invoke(main, ["runs"])
    assert listing.exit_code == 0, listing.output
    assert not any(unicodedata.category(c) == "Cf" for c in result.output + listing.output)
    assert "n\\u200fx" in listing.output


def test_the_flagged_cards_listing_shows_a_crafted_note_escaped(isolated_data_dir):
    from minigpt.store import Store
    from minigpt.study import flags

    store = Store(isolated_data_dir / "progress.sqlite3")
    flags.flag_card(store, "term.query:reverse", "x")
    with store.conn:
        store.conn.execute("UPDATE card_flag SET card_id = ?, note = ?",
                           ("id\x1b]0;T\x07\u202e", "\x1b]52;c;Qm9v\x07 \u200f \x9b2J"))
    store.close()
    result = CliRunner().invoke(main, ["cards", "--flagged"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output and "\x9b" not in result.output
    assert not any(unicodedata.category(c) == "Cf" for c in result.output)
    assert "␛]52;c;Qm9v␇ \\u200f \\x9b2J" in result.output


@pytest.mark.parametrize("keep", ["", "\n", "\n\t"])
def test_ascii_text_takes_the_short_class_and_shows_what_the_full_one_would(keep):
    """ASCII text skips building the format-character class (a scan of 196k code points the home
    screen's first frame paid for its key names); it must escape exactly what the full class does."""
    from minigpt import text

    every_ascii = "".join(chr(c) for c in range(128))
    full = text._pattern(keep).sub(lambda m: text._visible(m.group()), every_ascii)
    text._format_characters.cache_clear()
    text._pattern.cache_clear()
    assert printable(every_ascii, keep=keep) == full
    assert has_control(every_ascii) and not has_control("plain words")
    assert text._format_characters.cache_info().currsize == 0  # never built for ASCII
    assert printable("a\u200fb", keep=keep) == "a\\u200fb"  # anything else still gets the full class
