"""Rules every lesson, card and question keeps, checked over everything on disk.

New lessons (any order number) and new cards are picked up automatically: a lesson without
enough cards of its own, a definition that names its own term, or a question whose right option
gives itself away by length fails here.
"""

import random
import re
from collections import Counter

import pytest

from minigpt import numbers
from minigpt.lessons import load_lessons
from minigpt.study import numeric
from minigpt.study.cards import CLOZE_RE
from minigpt.study.decks import load_decks
from minigpt.study.formats import FORMATS
from minigpt.study.quiz import (
    CHAPTER_QUIZ_MIN,
    can_choose,
    chapter_notes,
    chapter_quiz,
    choice_question,
    formats_for,
    question_for,
)

STOPWORDS = {"a", "an", "the", "of", "to", "in", "on", "by", "for", "and", "or", "with", "is",
             "it", "as", "at", "per", "its", "from", "that", "this", "be", "are", "all", "you",
             "one", "not", "no", "vs", "each", "into", "so", "than", "can", "has", "but"}
ID_PATTERN = re.compile(r"\b(?:term|q|cloze|num)\.[a-z0-9-]+")


@pytest.fixture(scope="module")
def deck():
    return load_decks()


@pytest.fixture(scope="module")
def lessons():
    return load_lessons()


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+", text.lower().replace("-", " "))


def same_word(a: str, b: str) -> bool:
    """One word gives the other away: equal, a short word with a plural/verb ending, or a long
    shared stem ("normalization"/"normalises", "mask"/"masking", "encoder"/"encoding")."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) <= 2 or short in STOPWORDS:
        return False
    if len(short) == 3:
        return long_.startswith(short) and len(long_) - len(short) <= 2
    prefix = 0
    for x, y in zip(a, b):
        if x != y:
            break
        prefix += 1
    return prefix >= 4 and prefix >= len(short) - 2


def giveaways(stem: str, answers: list[str]) -> list[str]:
    """Answer words (and whole multi-character aliases) that appear in the stem."""
    stem_words = words(stem)
    found = []
    for answer in answers:
        phrase = " ".join(words(answer))
        if len(phrase) >= 2 and re.search(rf"(?<![a-z0-9_]){re.escape(phrase)}(?![a-z0-9_])",
                                          " ".join(stem_words)):
            found.append(answer)
    return found


def term_words(card) -> list[str]:
    return [w for w in words(card.term) if w not in STOPWORDS and len(w) >= 2]


# -- every lesson can be quizzed --------------------------------------------------------------
def test_every_card_belongs_to_a_lesson_on_disk(deck, lessons):
    ids = {lesson.id for lesson in lessons}
    stray = {c.id: c.lesson for c in deck if c.lesson not in ids}
    assert not stray, f"cards tagged with lessons that do not exist: {stray}"


# Each chapter quiz is drawn with 3 seeds by default, 12 in soak (the same draw again, more often).
@pytest.mark.parametrize("seeds", [pytest.param(3, id="3-seeds"),
                                   pytest.param(12, id="12-seeds", marks=pytest.mark.soak)])
def test_every_lesson_has_a_chapter_quiz_of_six_questions_in_two_formats(deck, lessons, seeds):
    for lesson in lessons:
        notes = chapter_notes(deck, lesson.id)
        assert len(notes) >= CHAPTER_QUIZ_MIN, (
            f"{lesson.id}: only {len(notes)} notes; a chapter quiz needs {CHAPTER_QUIZ_MIN}")
        offered = {f for cards in notes.values() for c in cards for f in formats_for(c)}
        assert len(offered) >= 2, f"{lesson.id}: cards offer only {offered}"
        for seed in range(seeds):
            quiz = chapter_quiz(lesson.id, seed=seed, deck=deck)
            assert len(quiz) >= CHAPTER_QUIZ_MIN, lesson.id
            assert all(q.card.lesson == lesson.id for q in quiz)
            assert len({q.card.note_id for q in quiz}) == len(quiz), "a fact asked twice"
            assert len({q.format for q in quiz}) >= 2, (lesson.id, seed)


def test_a_lesson_added_between_others_is_checked_too(tmp_path, deck):
    """A lesson numbered 065 with no cards is caught by the same rule."""
    text = ('+++\nid = "new-topic"\ntitle = "New"\norder = 65\n+++\n# New\n\nBody.\n')
    (tmp_path / "065-new-topic.md").write_text(text, encoding="utf-8")
    (lesson,) = load_lessons(tmp_path)
    assert len(chapter_notes(deck, lesson.id)) < CHAPTER_QUIZ_MIN
    with pytest.raises(ValueError, match="no cards"):
        chapter_quiz(lesson.id, deck=deck)


# -- questions test instead of tell -----------------------------------------------------------
def test_definitions_never_contain_their_term(deck):
    bad = []
    for card in deck:
        if card.kind != "term":
            continue
        stem = words(card.definition)
        hits = [w for w in term_words(card) if any(same_word(w, s) for s in stem)]
        hits += giveaways(card.definition, [a for a in card.aliases if len(a) >= 2])
        if hits:
            bad.append(f"{card.id}: {hits}")
    assert not bad, "\n".join(bad)


def test_cloze_text_never_shows_a_blank(deck):
    bad = []
    for card in deck:
        if card.kind != "cloze":
            continue
        visible = CLOZE_RE.sub(" ", (card.source and _raw_cloze(card)) or card.front)
        for answer in card.cloze_answers:
            if numbers.is_number(answer):
                value = numeric.parse_number(answer)
                shown = [numeric.parse_number(t) for t in re.findall(r"\d[\d,.]*", visible)
                         if numbers.is_number(t)]
                if any(numeric.values_agree(v, value) for v in shown):
                    bad.append(f"{card.id}: {answer}")
            elif any(same_word(w, s) for w in words(answer) if len(w) >= 3
                     for s in words(visible)):
                bad.append(f"{card.id}: {answer}")
    assert not bad, bad


def _raw_cloze(card) -> str:
    return card.front.replace("[...]", " ")


def test_numeric_prompts_do_not_contain_the_answer(deck):
    bad = []
    for card in deck:
        if card.kind != "numeric" or card.numeric.is_shape:
            continue
        shown = re.findall(r"\d[\d,.]*(?:e[-+]?\d+)?", card.numeric.prompt)
        value = float(card.numeric.value)
        if any(numbers.is_number(t) and numeric.values_agree(numeric.parse_number(t), value)
               for t in shown):
            bad.append(f"{card.id}: {card.numeric.answer_text}")
        assert card.numeric.tolerance_note, card.id
    assert not bad, bad


def test_choice_stems_do_not_contain_the_right_option(deck):
    rng = random.Random(0)
    for card in deck:
        if not can_choose(card):
            continue
        q = choice_question(deck, card, rng)
        right = q.options[q.answer_index].text
        assert right.casefold() not in q.prompt.casefold(), card.id


@pytest.fixture(scope="module")
def choice_questions(deck) -> dict[int, list]:
    """Every card that can be asked as a choice, asked with seeds 0 to 3: built once for the three
    checks below (the two that go through seeds 0 and 1 used to build them again)."""
    by_seed = {}
    for seed in range(4):
        rng = random.Random(seed)
        by_seed[seed] = [choice_question(deck, card, rng) for card in deck if can_choose(card)]
    return by_seed


def _all_choice_questions(choice_questions: dict[int, list], seeds=range(4)):
    for seed in seeds:
        yield from choice_questions[seed]


def test_options_of_a_question_are_one_kind(deck, choice_questions):
    terms = {c.term.casefold() for c in deck if c.kind == "term"}
    for q in _all_choice_questions(choice_questions, seeds=range(2)):
        texts = [o.text for o in q.options]
        assert len(texts) >= 3 and len({t.casefold() for t in texts}) == len(texts), q.card_id
        if q.card.kind == "reverse":
            assert all(t.casefold() in terms for t in texts), (q.card_id, texts)
        elif q.card.kind == "term":
            assert not any(t.casefold() in terms for t in texts), (q.card_id, texts)
            assert all(len(words(t)) >= 6 for t in texts), (q.card_id, texts)
        else:  # authored options: all short terms or all sentences, never a mix
            kinds = {len(words(t)) >= 6 for t in texts}
            assert len(kinds) == 1, (q.card_id, texts)


def test_the_right_option_is_rarely_the_longest(choice_questions):
    questions = list(_all_choice_questions(choice_questions))
    longest = sum(1 for q in questions
                  if len(q.options[q.answer_index].text) > max(
                      len(o.text) for o in q.options if not o.correct))
    share = longest / len(questions)
    assert share <= 0.35, f"right option strictly longest in {share:.0%} of {len(questions)}"


def test_distractor_terms_are_taught(deck, lessons, choice_questions):
    terms = {c.term.casefold() for c in deck if c.kind == "term"}
    text = " ".join(lesson.body.lower() for lesson in lessons)
    for q in _all_choice_questions(choice_questions, seeds=range(2)):
        if q.card.kind == "reverse":
            for o in q.options:
                assert o.text.casefold() in terms, (q.card_id, o.text)
    untaught = [(c.id, conf) for c in deck for conf in c.confusables
                if conf.casefold() not in terms and conf.lower() not in text]
    assert not untaught, untaught


def test_type_the_term_is_only_asked_for_terms(deck):
    for card in deck:
        for fmt in formats_for(card):
            q = question_for(deck, card, random.Random(0), fmt=fmt)
            if q.format == "type":
                assert card.kind == "reverse" or (card.kind == "cloze" and not card.numeric_blanks)
                assert not any(numbers.is_number(a) for a in card.cloze_answers), card.id
        if card.kind == "cloze" and card.numeric_blanks:
            assert formats_for(card) == ("numeric",), card.id


def test_learners_never_see_card_ids(deck):
    for card in deck:
        shown = [card.front, card.back, card.definition, card.term, *card.checklist,
                 card.short, *(d.text for d in card.distractors), *(d.why for d in card.distractors)]
        if card.kind == "numeric":
            shown += [card.numeric.prompt, card.numeric.solution]
        for text in shown:
            assert not ID_PATTERN.search(text or ""), (card.id, text)


def test_every_format_is_used_somewhere(deck):
    used = Counter(f for card in deck for f in formats_for(card))
    assert set(used) == set(FORMATS), used


def test_every_term_is_named_in_the_lesson_it_belongs_to(deck, lessons):
    from minigpt.study.matching import normalize

    bodies = {lesson.id: f" {normalize(lesson.body)} " for lesson in lessons}
    missing = [c.id for c in deck if c.kind == "term" and not any(
        f" {normalize(form)} " in bodies[c.lesson] for form in (c.term, *c.aliases))]
    assert not missing, f"terms their lesson never names: {missing}"
