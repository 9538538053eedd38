"""Options you can trust, over generated quizzes for every lesson and several seeds: a related
concept is never a wrong option, two wrong options never say the same thing, the options of one
question are of one kind, and no stem gives its answer away."""

import random
import re

import pytest

from minigpt.study import quiz
from minigpt.study.decks import load_decks
from minigpt.study.matching import normalize

DECK = load_decks()
SEEDS = range(4)


def generated_choice_questions():
    """Every lesson's chapter quiz with several seeds, plus every card asked as a choice."""
    for lesson in sorted(DECK.lessons()):
        for seed in SEEDS:
            for q in quiz.chapter_quiz(lesson, seed=seed, deck=DECK):
                if q.format == "choice":
                    yield q
    for seed in SEEDS[:2]:
        rng = random.Random(seed)
        for card in DECK:
            if "choice" in quiz.formats_for(card):
                yield quiz.question_for(DECK, card, rng, fmt="choice")


QUESTIONS = list(generated_choice_questions())


def test_related_cards_are_declared_both_ways_usable():
    related = [c for c in DECK if c.related]
    assert related, "the decks declare related concepts"
    for card in related:
        for other in card.related:
            assert DECK[other].kind == "term" and quiz.is_related(DECK[other], card)


def test_a_related_concept_is_never_a_wrong_option():
    for q in QUESTIONS:
        for other in DECK:
            if other.kind != "term" or not quiz.is_related(other, q.card):
                continue
            wrong = {o.text for o in q.options if not o.correct}
            assert other.definition not in wrong and other.term not in wrong, (q.card.id, other.id)


def test_no_two_wrong_options_restate_one_idea():
    for q in QUESTIONS:
        wrong = [o.text for o in q.options if not o.correct]
        for i, a in enumerate(wrong):
            for b in wrong[i + 1:]:
                assert not quiz.restates(a, b), (q.card.id, a, b)


def test_options_are_of_one_kind():
    definitions = {c.definition: c for c in DECK if c.kind == "term"}
    terms = {c.term: c for c in DECK if c.kind == "term"}
    for q in QUESTIONS:
        card = q.card
        own = {d.text for d in card.distractors}
        assert len(q.options) >= 3 and sum(o.correct for o in q.options) == 1, card.id
        for o in q.options:
            if o.correct or o.text in own:
                continue
            pool = definitions if card.kind == "term" else terms
            assert o.text in pool, (card.id, o.text)       # a definition among definitions...
            assert pool[o.text].category == card.category   # ...and no paper among concepts


def test_options_come_from_the_topic_neighbourhood():
    """A wrong sibling option comes from the card's group or lesson whenever 3 such exist."""
    for q in QUESTIONS:
        if q.card.kind not in ("term", "reverse"):
            continue
        near, _far = quiz._siblings(DECK, q.card)
        if len(near) < 3:
            continue
        near_texts = {c.definition for c in near} | {c.term for c in near}
        own = {d.text for d in q.card.distractors} | set(q.card.confusables)
        for o in q.options:
            if not o.correct and o.text not in own:
                assert o.text in near_texts, (q.card.id, o.text)


@pytest.mark.parametrize("card", [c for c in DECK if c.kind == "reverse"], ids=lambda c: c.id)
def test_no_stem_contains_its_answer(card):
    """Asked for the term, the definition never holds the term's words, an alias or a symbol
    that names it (x·W_K gives "key" away)."""
    stem = normalize(card.definition)
    stem_words = set(stem.split()) | set(re.findall(r"[a-z]+", card.definition.lower()))
    for word in quiz.content_words(card.term):
        assert word not in stem_words, (card.id, word)
    for alias in card.aliases:
        alias = normalize(alias)
        assert not re.search(rf"(?<!\w){re.escape(alias)}(?!\w)", stem), (card.id, alias)
        if len(alias) == 1:  # a symbol: W_K, d_k or x_k hides it behind an underscore
            assert not re.search(rf"_{alias}\b", card.definition.lower()), (card.id, alias)
