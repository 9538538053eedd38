"""Options you can trust, over generated quizzes for every lesson and several seeds: a related
concept is never a wrong option, two wrong options never say the same thing, the options of one
question are of one kind, and no stem gives its answer away.

The decks and the ~2,000 questions are built once per test process, in session fixtures, not at
import: collecting this module (every xdist worker does) costs nothing. Each check goes through
every question and lists every one that fails it, not just the first.
"""

import random
import re

import pytest

from minigpt.study import quiz
from minigpt.study.decks import load_decks
from minigpt.study.matching import normalize

SEEDS = range(4)


@pytest.fixture(scope="session")
def deck():
    return load_decks()


@pytest.fixture(scope="session")
def choice_questions(deck):
    """Every lesson's chapter quiz with several seeds, plus every card asked as a choice."""
    questions = []
    for lesson in sorted(deck.lessons()):
        for seed in SEEDS:
            questions += [q for q in quiz.chapter_quiz(lesson, seed=seed, deck=deck) if q.format == "choice"]
    for seed in SEEDS[:2]:
        rng = random.Random(seed)
        questions += [quiz.question_for(deck, card, rng, fmt="choice") for card in deck
                      if "choice" in quiz.formats_for(card)]
    assert len(questions) > 1000, "the quizzes and cards give the checks below enough to go through"
    return questions


def _none(bad: list) -> None:
    assert not bad, f"{len(bad)} bad:\n" + "\n".join(map(repr, bad))


def test_related_cards_are_declared_both_ways_usable(deck):
    related = [c for c in deck if c.related]
    assert related, "the decks declare related concepts"
    for card in related:
        for other in card.related:
            assert deck[other].kind == "term" and quiz.is_related(deck[other], card)


def test_a_related_concept_is_never_a_wrong_option(deck, choice_questions):
    bad = []
    for q in choice_questions:
        wrong = {o.text for o in q.options if not o.correct}
        bad += [(q.card.id, other.id) for other in deck
                if other.kind == "term" and quiz.is_related(other, q.card)
                and (other.definition in wrong or other.term in wrong)]
    _none(bad)


def test_no_two_wrong_options_restate_one_idea(choice_questions):
    bad = []
    for q in choice_questions:
        wrong = [o.text for o in q.options if not o.correct]
        bad += [(q.card.id, a, b) for i, a in enumerate(wrong) for b in wrong[i + 1:] if quiz.restates(a, b)]
    _none(bad)


def test_options_are_of_one_kind(deck, choice_questions):
    definitions = {c.definition: c for c in deck if c.kind == "term"}
    terms = {c.term: c for c in deck if c.kind == "term"}
    bad = []
    for q in choice_questions:
        card = q.card
        own = {d.text for d in card.distractors}
        if len(q.options) < 3 or sum(o.correct for o in q.options) != 1:
            bad.append((card.id, "not 3+ options with one correct"))
        pool = definitions if card.kind == "term" else terms
        for o in q.options:
            if o.correct or o.text in own:
                continue
            if o.text not in pool:
                bad.append((card.id, o.text, "not a " + ("definition" if card.kind == "term" else "term")))
            elif pool[o.text].category != card.category:  # no paper among concepts
                bad.append((card.id, o.text, f"category {pool[o.text].category}, not {card.category}"))
    _none(bad)


def test_options_come_from_the_topic_neighbourhood(deck, choice_questions):
    """A wrong sibling option comes from the card's group or lesson whenever 3 such exist."""
    bad = []
    for q in choice_questions:
        if q.card.kind not in ("term", "reverse"):
            continue
        near, _far = quiz._siblings(deck, q.card)
        if len(near) < 3:
            continue
        near_texts = {c.definition for c in near} | {c.term for c in near}
        own = {d.text for d in q.card.distractors} | set(q.card.confusables)
        bad += [(q.card.id, o.text) for o in q.options
                if not o.correct and o.text not in own and o.text not in near_texts]
    _none(bad)


def test_no_stem_contains_its_answer(deck):
    """Asked for the term, the definition never holds the term's words, an alias or a symbol
    that names it (x·W_K gives "key" away)."""
    reverse = [c for c in deck if c.kind == "reverse"]
    assert reverse, "the decks have reverse cards"
    bad = []
    for card in reverse:
        stem = normalize(card.definition)
        stem_words = set(stem.split()) | set(re.findall(r"[a-z]+", card.definition.lower()))
        bad += [(card.id, word) for word in quiz.content_words(card.term) if word in stem_words]
        for alias in card.aliases:
            alias = normalize(alias)
            if re.search(rf"(?<!\w){re.escape(alias)}(?!\w)", stem):
                bad.append((card.id, alias))
            elif len(alias) == 1 and re.search(rf"_{alias}\b", card.definition.lower()):
                bad.append((card.id, alias, "behind an underscore"))  # a symbol: W_K, d_k or x_k hides it
    _none(bad)
