"""An alias names the same concept as its card, not a narrower, broader or different one: checked
over every card of every deck, enumerated, beyond the name-clash checks of test_study_grading.py.

- an alias is no other concept's name, and none of its own card's confusables;
- an alias made by dropping words from the term (a short form) is not also a short form of another
  concept's name: then it names what the two share, something broader than either;
- an alias that adds words to another concept's name names a kind of that concept (narrower);
- every alias is grounded: a spelling or initialism of the term, sharing a word with the term or
  the card's own text, or used in the card's lesson.
"""

from __future__ import annotations

import re

import pytest

from minigpt.lessons import load_lessons
from minigpt.study import quiz
from minigpt.study.decks import load_decks
from minigpt.study.matching import _compact

DECK = load_decks()
TERMS = [c for c in DECK if c.kind == "term"]  # one per concept (its reverse card shares the names)
LESSONS = {lesson.id: lesson.body for lesson in load_lessons()}
FILLER = {"a", "an", "the", "of", "for", "and", "to", "in", "with", "from", "by", "on"}


def _words(name: str) -> frozenset[str]:
    """Content words, lower case, with a plural 's' and a British 's' spelling folded."""
    out = set()
    for w in re.findall(r"[a-z0-9²]+", name.lower().replace("optimis", "optimiz").replace("normalis", "normaliz")):
        if w not in FILLER:
            out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return frozenset(out)


def _stem(word: str) -> str:
    return word[:5]


def _initials(name: str) -> str:
    return "".join(w[0] for w in re.split(r"[\s\-_/]+", name.lower()) if w)


def _abbreviates(short: str, name: str) -> bool:
    """'bf16' of 'bfloat16', 'ppl' of 'perplexity', 'mha' of 'multi-head attention': the short
    form's letters, in order, inside the name, starting with its first letter."""
    short, name = _compact(short), _compact(name)
    if not short or not name or short[0] != name[0]:
        return False
    rest = iter(name)
    return all(ch in rest for ch in short)


def _unrelated(a, b) -> bool:
    return a.note_id != b.note_id and b.note_id not in a.related and a.note_id not in b.related


ALIASES = [(c, a) for c in TERMS for a in c.aliases]

# Checked by hand: the short form or longer name is the usual name of exactly this concept.
SAME_CONCEPT = {
    ("term.residual", "residual"),  # "residual scaling" scales this connection's branch
    ("term.transformer-block", "block"),  # "block parameters" are this block's weights
    ("term.warmup", "warmup"),  # the warmup-stable-decay schedule starts with this warmup
    ("term.top-k-routing", "top-k gating"),  # gating and routing: one MoE router, two names
    ("term.final-layernorm", "ln_f"),  # GPT-2's code name for the final LayerNorm (lesson 120)
}


def test_the_decks_have_aliases_to_check():
    assert len(ALIASES) > 100


@pytest.mark.parametrize("card,alias", ALIASES, ids=lambda x: getattr(x, "id", x))
def test_an_alias_is_no_other_concepts_name_nor_its_own_confusable(card, alias):
    key = _compact(alias)
    assert key not in {_compact(c) for c in card.confusables}, (card.id, alias)
    for other in TERMS:
        if _unrelated(card, other):
            assert key not in {_compact(n) for n in quiz.concept_names(other)}, (card.id, alias, other.id)


def test_a_short_form_is_not_shared_with_another_concept():
    """'saturation' for softmax saturation, 'weight decay' for decoupled weight decay: dropping the
    qualifier leaves a name that fits other concepts too."""
    bad = []
    for card, alias in ALIASES:
        words = _words(alias)
        if not words or not words < _words(card.term) or (card.id, alias) in SAME_CONCEPT:
            continue
        for other in TERMS:
            if _unrelated(card, other) and any(words <= _words(n) for n in quiz.concept_names(other)):
                bad.append((card.id, alias, other.id))
    assert not bad, bad


def test_an_alias_is_not_a_kind_of_another_concept():
    """'sliding-window attention' for sparse attention: an alias that is another concept's name with
    words added is narrower; it must carry words of its own card's term as well."""
    bad = []
    for card, alias in ALIASES:
        if (card.id, alias) in SAME_CONCEPT or _abbreviates(card.term, alias) or _abbreviates(alias, card.term):
            continue  # listed above, or the term's expansion ("attention with linear biases" for ALiBi)
        words = _words(alias)
        own = _words(card.term) | {w for a in card.aliases if a != alias for w in _words(a)}
        for other in TERMS:
            if not _unrelated(card, other):
                continue
            for name in quiz.concept_names(other):
                theirs = _words(name)
                if theirs and theirs < words and not {w[:4] for w in words - theirs} & {w[:4] for w in own}:
                    bad.append((card.id, alias, other.id, name))
    assert not bad, bad


def _grounded(card, alias: str) -> bool:
    names = [card.term, *(a for a in card.aliases if a != alias)]
    if any(_abbreviates(alias, n) or _abbreviates(n, alias) for n in names):
        return True  # a spelling, an abbreviation, an initialism or its expansion
    own_text = " ".join([*names, card.definition, card.back, card.front])
    if {_stem(w) for w in _words(alias)} & {_stem(w) for w in _words(own_text)}:
        return True  # shares a word with the concept's names or the card's own text
    return _compact(alias) in _compact(LESSONS.get(card.lesson, ""))  # the lesson uses it


def test_every_alias_is_grounded():
    """Every alias is a form of the concept's name, or the card or its lesson uses it: an alias
    nothing in the course connects to the concept is a guess at a synonym."""
    bad = [(card.id, alias) for card, alias in ALIASES if not _grounded(card, alias)]
    assert not bad, bad
