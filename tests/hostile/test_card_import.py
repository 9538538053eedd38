"""Card imports: the Markdown and TSV parsers under hypothesis, and damaged or strange files.

A file either imports whole or is refused with its name and line; nothing is half-imported, no
line is silently dropped, and the app shows the reason with the screen still working.
"""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minigpt.store import Store
from minigpt.study.anki import (
    _MARKER,
    MAX_IMPORT_BYTES,
    CardImportError,
    import_file,
    parse_markdown,
    parse_tsv,
    read_card_file,
    user_cards,
)
from tests.helpers.hostile import OSC52, assert_screen_safe, bounded

_side_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")


def _plain_line(text: str) -> bool:
    return not _MARKER.match(text)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.text(_side_chars, min_size=1, max_size=30),
                          st.text(_side_chars, min_size=1, max_size=30)), min_size=1, max_size=6))
def test_markdown_round_trip(cards):
    cards = [(f, b) for f, b in cards
             if f.strip() and b.strip() and all(_plain_line(x) for x in (f + "\n" + b).splitlines())]
    text = "".join(f"Q: {f}\nA: {b}\n\n" for f, b in cards)
    expected = [("\n".join(f.splitlines()).strip(), "\n".join(b.splitlines()).strip()) for f, b in cards]
    assert parse_markdown(text) == expected


_tsv_chars = st.characters(blacklist_categories=("Cs", "Zl", "Zp", "Cc"), blacklist_characters='\x85"')


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.text(_tsv_chars, min_size=1, max_size=30),
                          st.text(_tsv_chars | st.just("\t"), min_size=1, max_size=30)), max_size=6))
def test_tsv_round_trip_keeps_every_field(cards):
    cards = [(f.strip(), b.strip()) for f, b in cards if f.strip() and b.strip() and not f.lstrip().startswith("#")]
    text = "".join(f"{f}\t{b}\n" for f, b in cards)
    assert parse_tsv(text) == cards  # a second tab stays in the back: nothing dropped


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list("QA:：*- \t\n\r\"#xy\u2028") + ["Q:", "A:", "**Q:**"]), max_size=200)
       .map("".join))
def test_any_text_gives_cards_or_one_named_error(text):
    for parse in (parse_markdown, parse_tsv):
        start = time.monotonic()
        try:
            cards = parse(text, "f.md")
        except CardImportError as e:
            assert str(e).startswith("f.md: line ")
        else:
            assert all(f and b and f == f.strip() for f, b in cards)
        assert time.monotonic() - start < 1


def test_long_hostile_lines_parse_in_bounded_time():
    text = "Q: " + " " * 15_000 + "x\n" + "- " * 2_000 + "\nA:" + "*" * 15_000 + "y\n" + " " * 200_000
    start = time.monotonic()
    assert len(parse_markdown(text)) == 1
    with pytest.raises(CardImportError, match="line 1: the question has 200,004 characters"):
        parse_markdown("Q: " + "x" * 200_004 + "\nA: y\n")
    assert time.monotonic() - start < 2


def test_stray_quote_does_not_swallow_the_following_lines():
    cards = parse_tsv('"unclosed\tback one\nfront two\tback two\n"a ""quoted"" one"\t"b"\n')
    assert cards == [('"unclosed', "back one"), ("front two", "back two"), ('a "quoted" one', "b")]


@pytest.mark.parametrize("content, pattern", [
    (b"Q: a\x00b\nA: c\n", "NUL bytes"),
    (b"Q: caf\xe9\nA: x\n", r"line 1 is not valid UTF-8"),
    (b"A: no question\n", r"line 1: 'A:' without a 'Q:'"),
    (b"Q: one\nA: x\n\nQ: two\n", r"line 4: question has no 'A:' answer"),
    (b"Q: one\nA:   \n", r"line 1: the answer is empty"),
    (b"Q: same\nA: x\nQ: same\nA: y\n", r"cards 1 and 2 have the same question"),
    (b"just notes, no cards\n", "no cards found"),
])
def test_bad_card_files_are_refused_with_their_line(tmp_path, content, pattern):
    path = tmp_path / "cards.md"
    path.write_bytes(content)
    store = Store(tmp_path / "p.sqlite3")
    with pytest.raises(CardImportError, match=pattern):
        import_file(store, path)
    assert user_cards(store) == []


def test_special_and_huge_files(tmp_path):
    fifo = tmp_path / "cards.md"
    os.mkfifo(fifo)
    big = tmp_path / "big.md"
    big.write_bytes(b"Q: x\nA: y\n" * (MAX_IMPORT_BYTES // 10 + 1))
    with bounded(10):
        for path, pattern in [(fifo, "not a regular file"), (tmp_path, "not a regular file"),
                              (big, "too large for a card file"), (tmp_path / "nope.md", "cannot read")]:
            with pytest.raises(CardImportError, match=pattern):
                read_card_file(path)


def test_byte_order_mark_is_not_part_of_the_first_question(tmp_path):
    path = tmp_path / "bom.tsv"
    path.write_bytes("\ufefffront\tback\n".encode())
    assert read_card_file(path) == [("front", "back")]


async def test_app_shows_why_an_import_failed_and_keeps_going(tmp_path, quick_decks, make_app):
    binary = tmp_path / f"cards{OSC52}.md"
    binary.write_bytes(b"\x00\x01\x02binary")
    good = tmp_path / "good.md"
    good.write_text("Q: a fine question\nA: a fine answer\n")
    app = make_app()
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.press("f")
        await pilot.pause()
        screen = app.screen
        for path, shown in ((binary, "cards␛]52;c;cHduZWQ=␇.md: contains NUL bytes"),
                            (tmp_path / f"missing{OSC52}.md", "No file at")):
            await pilot.press("i")
            await pilot.pause()
            screen.query_one("#fc-import-path").value = str(path)
            await pilot.press("enter")
            await pilot.pause()
            screen.query_one("#fc-import-path").value = ""  # what the learner typed, not a file's text
            await pilot.pause()
            assert_screen_safe(app, contains=shown)
        screen.query_one("#fc-import-path").value = str(good)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen and [c.front for c in user_cards(app.store)] == ["a fine question"]
