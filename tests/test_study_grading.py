"""Grading properties over the real decks: every card of every deck, enumerated, not named.

A right answer is never marked wrong (the displayed answer and each alias, in every format that
can ask for it), normalising never empties an answer, and no typed string is right for two
different concepts, not even as a typo of both.
"""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minigpt.study import numeric, quiz
from minigpt.study.decks import load_decks
from minigpt.study.matching import _compact, match_answer, normalize

DECK = load_decks()
CARDS = list(DECK)


def typed_forms(card) -> list[str]:
    """What a learner may type for a card: the displayed answer, and with each alias."""
    if card.kind == "reverse":
        return [card.term, *card.aliases]
    if card.kind == "cloze" and len(card.cloze_answers) == 1:
        return [card.expected, *card.aliases]
    forms = [card.expected]
    for i, aliases in enumerate(card.blank_aliases):
        for alias in aliases:
            parts = list(card.cloze_answers)
            parts[i] = alias
            forms.append(" / ".join(parts))
    return forms


def test_every_card_asked_somehow():
    assert CARDS and all(quiz.formats_for(c) for c in CARDS)


@pytest.mark.parametrize("card", [c for c in CARDS if "type" in quiz.formats_for(c)],
                         ids=lambda c: c.id)
def test_displayed_answer_and_aliases_are_right_when_typed(card):
    question = quiz.question_for(DECK, card, random.Random(0), fmt="type")
    for form in typed_forms(card):
        outcome = quiz.answer_typed(question, form)
        assert outcome.correct and outcome.rating == 3, (card.id, form, outcome.feedback)
        assert quiz.answer_typed(question, form.upper()).correct, (card.id, form)


@pytest.mark.parametrize("card", [c for c in CARDS if "numeric" in quiz.formats_for(c)],
                         ids=lambda c: c.id)
def test_displayed_number_is_right(card):
    question = quiz.question_for(DECK, card, random.Random(0), fmt="numeric")
    asked = question.card  # a generative card is asked with newly drawn inputs
    assert quiz.check_readable(question, asked.expected) is None, card.id
    assert quiz.answer_numeric(question, asked.expected).correct, (card.id, asked.expected)


@pytest.mark.parametrize("card", [c for c in CARDS if c.kind == "numeric"
                                  and not c.numeric.is_shape], ids=lambda c: c.id)
def test_number_computed_by_the_generator_is_right(card):
    """The generator's own value, and that value as the lessons print it (3 significant
    figures) when the card allows a tolerance, are accepted: written against the generator
    API, so the property survives new templates."""
    item = numeric.generate(card.numeric.generator, card.numeric.params,
                            tolerance=card.numeric.tolerance,
                            abs_tolerance=card.numeric.abs_tolerance)
    assert numeric.check(item, repr(float(item.value))).correct
    value = float(item.value)
    if item.abs_tolerance:  # ±0.01 stated: two decimals, as the question implies
        places = max(0, math.ceil(-math.log10(item.abs_tolerance)))
        assert numeric.check(item, f"{value:.{places}f}").correct, (card.id, value)
    elif item.tolerance >= 0.005:  # within 1%: three significant figures
        assert numeric.check(item, f"{value:.3g}").correct, (card.id, value)


def test_normalising_never_empties_an_answer_or_alias():
    for card in CARDS:
        names = [*card.cloze_answers, *card.aliases, *(a for b in card.blank_aliases for a in b)]
        if card.kind in ("term", "reverse"):
            names.append(card.term)
        for name in names:
            assert _compact(name), (card.id, name)


def test_no_name_belongs_to_two_concepts():
    owner: dict[str, str] = {}
    for card in CARDS:
        for name in quiz.concept_names(card):
            key = _compact(name)
            assert owner.setdefault(key, card.note_id) == card.note_id or \
                card.note_id in DECK[owner[key]].related, (name, owner[key], card.note_id)


def test_confusables_stay_wrong():
    for card in CARDS:
        if card.kind == "reverse":
            question = quiz.question_for(DECK, card, random.Random(0), fmt="type")
            for conf in card.confusables:
                assert not quiz.answer_typed(question, conf).correct, (card.id, conf)


REVERSE = [quiz.question_for(DECK, c, random.Random(0), fmt="type") for c in CARDS
           if c.kind == "reverse"]
NAMES = sorted({n for c in CARDS for n in quiz.concept_names(c)})


def _edits(name: str, data) -> str:
    """The name, or the name with one character changed, dropped or doubled."""
    how = data.draw(st.sampled_from(["same", "swap", "drop", "double", "upper"]))
    if how == "upper" or len(name) < 2:
        return name.upper()
    i = data.draw(st.integers(0, len(name) - 1))
    if how == "swap":
        return name[:i] + data.draw(st.sampled_from("aeiouxzé")) + name[i + 1:]
    if how == "drop":
        return name[:i] + name[i + 1:]
    if how == "double":
        return name[:i] + name[i] + name[i:]
    return name


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NAMES), st.data())
def test_no_typed_string_is_right_for_two_concepts(name, data):
    typed = _edits(name, data)
    right_for = {q.card.note_id for q in REVERSE if quiz.answer_typed(q, typed).correct}
    assert len(right_for) <= 1, (typed, right_for)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(REVERSE), st.sampled_from(NAMES))
def test_another_concepts_name_is_wrong(question, name):
    if _compact(name) in {_compact(n) for n in quiz.concept_names(question.card)}:
        return
    assert not quiz.answer_typed(question, name).correct, (question.card.id, name)


# -- the normaliser on any text, not only ASCII ---------------------------------------------------
@given(st.text(max_size=30))
def test_normalize_is_idempotent_on_any_text(text):
    assert normalize(normalize(text)) == normalize(text)


@given(st.text(min_size=1, max_size=20))
def test_any_answer_is_right_when_typed_as_shown(text):
    if not _compact(text):
        return  # blank or only marks that combine with nothing: not an answer a deck may hold
    assert match_answer(text, text).verdict == "exact"
    assert match_answer(f" {text.casefold()} ", text).verdict == "exact"


@given(st.sampled_from(["−∞", "√", "∞", "±", "→"]))
def test_symbol_only_answers_keep_their_symbols(symbol):
    assert normalize(symbol) and match_answer(symbol, symbol).verdict == "exact"
    assert match_answer(symbol.replace("−", "-"), symbol).verdict == "exact"
