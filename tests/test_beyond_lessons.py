"""The lessons beyond the course: placed in the track, examples and snippets present, their cards
tagged to them, and a chapter quiz of at least six questions in at least two formats each."""

from __future__ import annotations

from pathlib import Path

import pytest

from minigpt import lessons as L
from minigpt.study.decks import load_decks
from minigpt.study.quiz import chapter_quiz

BEYOND = {  # lesson id → its place in the track (order)
    "averaging-the-past": 55, "long-context": 95, "tokenization": 155, "the-loss": 163,
    "initialization": 166, "precision-and-memory": 175, "kv-memory-gqa": 205,
    "inference-cost": 207, "mixture-of-experts": 232, "after-pretraining": 236,
}
DECK = Path(__file__).resolve().parents[1] / "lessons" / "decks" / "beyond.toml"


@pytest.fixture(scope="module")
def lessons():
    return {l.id: l for l in L.load_lessons()}


@pytest.fixture(scope="module")
def deck():
    return load_decks()


def test_every_new_lesson_is_in_the_track_where_it_belongs(lessons):
    for lesson_id, order in BEYOND.items():
        assert lessons[lesson_id].order == order
    ordered = [l.id for l in sorted(lessons.values(), key=lambda l: l.order)]
    assert ordered.index("averaging-the-past") < ordered.index("causal-masking")
    assert ordered.index("rope") < ordered.index("long-context") < ordered.index("layer-norm")
    assert ordered.index("kv-cache") < ordered.index("kv-memory-gqa")


def test_every_new_lesson_has_worked_examples_and_a_snippet(lessons):
    for lesson_id in BEYOND:
        lesson = lessons[lesson_id]
        assert lesson.example_ids(), lesson_id
        assert lesson.snippets(), lesson_id


def test_the_tokenization_lesson_opens_the_tokens_explorer(lessons):
    from tui.navigation import EXPLORERS, SCREENS

    assert lessons["tokenization"].extra["explorers"] == ["tokens"]
    assert any(e.id == "tokens" for e in EXPLORERS) and "explorer.tokens" in SCREENS


def test_every_beyond_card_belongs_to_a_new_lesson(deck):
    mine = [c for c in deck if Path(c.source).name == DECK.name]
    assert len(mine) >= 60
    assert {c.lesson for c in mine} == set(BEYOND)


@pytest.mark.parametrize("lesson_id", sorted(BEYOND))
def test_chapter_quiz_has_six_questions_in_two_formats(deck, lesson_id):
    notes = {c.id.split(":")[0] for c in deck.by_lesson(lesson_id)}
    assert len(notes) >= 6, lesson_id
    for seed in range(5):
        quiz = chapter_quiz(lesson_id, n=8, seed=seed, deck=deck)
        assert len(quiz) >= 6
        assert len({q.format for q in quiz}) >= 2, (lesson_id, seed)


def test_term_definitions_do_not_give_the_term_away(deck):
    import re

    for card in deck:
        if card.kind != "term" or Path(card.source).name != DECK.name:
            continue
        words = [w for w in re.split(r"[^a-z0-9]+", card.term.lower()) if len(w) > 3]
        for w in words:
            assert not re.search(rf"\b{w}", card.definition.lower()), (card.id, w)
        for alias in card.aliases:
            assert alias.lower() not in card.definition.lower(), (card.id, alias)


def test_readme_lists_every_lesson_in_track_order(lessons):
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    listed = readme.split("## The lessons", 1)[1].split("\n## ", 1)[0]
    ordered = sorted(lessons.values(), key=lambda l: l.order)
    for n, lesson in enumerate(ordered, 1):
        assert f"\n{n}. {lesson.title}" in listed, f"README's lesson list lacks {n}. {lesson.title}"
