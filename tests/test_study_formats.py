"""One home per idea: quiz modes and rating names in minigpt.study.formats, the decks' cache in
minigpt.study.decks. Fails when a second definition appears."""

import re
from pathlib import Path

from minigpt.study.formats import FORMATS, LOG_MODES, QUIZ_MODES, RATING_NAMES
from minigpt.study.quiz import formats_for
from minigpt.study.review import QUIZ_MODES as REVIEW_LOG_MODES

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [p for d in ("minigpt", "tui") for p in (ROOT / d).rglob("*.py")]


def test_rating_and_mode_names_are_defined_once():
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        if path.name == "formats.py":
            continue
        assert not re.search(r'\{\s*1:\s*"Again"', text), f"{path}: rating names defined again"
        assert '"Multiple choice"' not in text, f"{path}: mode titles defined again"


def test_log_modes_come_from_the_registry():
    assert REVIEW_LOG_MODES == LOG_MODES and set(FORMATS) < set(QUIZ_MODES)
    assert set(RATING_NAMES) == {1, 2, 3, 4}


def test_only_the_decks_module_reads_deck_files_in_the_app():
    for path in SOURCES:
        if path.name == "decks.py" or "cli" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        assert "load_decks(" not in text, f"{path}: read the decks through cached_decks()"


def test_every_format_is_offered_by_some_card():
    from minigpt.study.decks import load_decks

    offered = {f for card in load_decks() for f in formats_for(card)}
    assert offered == set(FORMATS)


def test_chapter_mode_promises_no_more_questions_than_a_lesson_gives():
    """The picker said "Eight questions" while every lesson's chapter quiz had six or seven (found
    walking the quiz at 80x24): a size that is only an upper bound reads as one."""
    from minigpt.study.decks import cached_decks
    from minigpt.study.quiz import CHAPTER_QUIZ_SIZE, chapter_notes

    deck = cached_decks()
    sizes = {min(len(chapter_notes(deck, lesson)), CHAPTER_QUIZ_SIZE) for lesson in deck.lessons()}
    words = {6: "six", 7: "seven", 8: "eight", 10: "ten"}
    description = QUIZ_MODES["chapter"].description.lower()
    assert words[CHAPTER_QUIZ_SIZE] in description
    if min(sizes) < CHAPTER_QUIZ_SIZE:
        assert f"up to {words[CHAPTER_QUIZ_SIZE]}" in description


def test_every_format_carries_its_behaviour_and_builds_questions_of_its_own_id():
    """A format is one registry entry: which cards suit it, how it is built, graded and re-graded."""
    import random

    from minigpt.study.decks import cached_decks

    deck = cached_decks()
    for mode in QUIZ_MODES.values():
        if not mode.is_format:  # the chapter quiz mixes the formats' own questions
            assert mode.suits is mode.grade is mode.regrade is None, mode.id
            continue
        assert mode.suits is not None and mode.grade is not None, mode.id
        card = next(c for c in deck if mode.suits(c))
        assert mode.build(deck, card, random.Random(0)).format == mode.id


def test_no_module_switches_on_a_quiz_mode_name():
    """What a format does is its entry in minigpt.study.formats, not a chain of string tests."""
    names = "|".join(QUIZ_MODES)
    switch = re.compile(r'\b(format|fmt|mode)\s*(==|!=)\s*"(' + names + ')"')
    for path in SOURCES:
        found = switch.search(path.read_text(encoding="utf-8"))
        assert found is None, f"{path}: {found.group(0)}"
