"""Quiz questions and grading, chapter quizzes, Anki export and Markdown/TSV import."""

import random
import sqlite3
import zipfile
from pathlib import Path

import pytest

from minigpt.store import Store
from minigpt.study import anki
from minigpt.study.decks import load_decks
from minigpt.study.quiz import (
    answer_choice,
    answer_numeric,
    answer_typed,
    chapter_quiz,
    choice_question,
    question_for,
    reveal,
    self_grade,
)
from minigpt.study.review import StudySession

ROOT = Path(__file__).resolve().parent.parent
DECKS = ROOT / "lessons" / "decks"


@pytest.fixture(scope="module")
def deck():
    return load_decks(DECKS)


def test_choice_has_one_right_answer_and_reasons(deck):
    for cid in ("term.layer-norm", "term.causal-mask:reverse", "q.why-scale"):
        q = choice_question(deck, deck[cid], random.Random(1))
        assert len(q.options) >= 3 and sum(o.correct for o in q.options) == 1
        assert len({o.text for o in q.options}) == len(q.options)
        for i, o in enumerate(q.options):
            out = answer_choice(q, i)
            assert out.correct == o.correct
            assert out.rating == (3 if o.correct else 1)
            if not o.correct:
                assert out.why
    q = choice_question(deck, deck["term.causal-mask"], random.Random(0))
    texts = {o.text for o in q.options}
    assert any(d.text in texts for d in deck["term.causal-mask"].distractors)


def test_typed_answers(deck):
    q = question_for(deck, deck["term.layer-norm:reverse"], fmt="type")
    assert answer_typed(q, "Layer Normalisation").rating == 3
    assert answer_typed(q, "layer normalizaton").rating == 2
    assert answer_typed(q, "layer normalization", hint=True).rating == 2
    wrong = answer_typed(q, "batch normalization")
    assert not wrong.correct and wrong.rating == 1 and "different" in wrong.feedback
    cloze = question_for(deck, deck["cloze.attention-formula"])
    assert cloze.format == "type"
    assert answer_typed(cloze, "softmax").correct
    assert answer_typed(cloze, "Soft max").correct
    assert not answer_typed(cloze, "sigmoid").correct


def test_numeric_blanks_are_numbers_compared_by_value(deck):
    q = question_for(deck, deck["cloze.clip-factor"])
    assert q.format == "numeric" and q.note == "exact value"
    for text in ("1/5", "0.2", "2e-1", "20%", " 0,2 "):
        assert answer_numeric(q, text).correct, text
    assert not answer_numeric(q, "0.25").correct
    unreadable = answer_numeric(q, "1x10^400")
    assert not unreadable.correct and "too large" in unreadable.feedback
    with pytest.raises(ValueError):
        question_for(deck, deck["cloze.clip-factor"], fmt="type")


def test_numeric_and_explain(deck):
    q = question_for(deck, deck["num.block-params"], random.Random(0))  # a fresh d each asking
    assert q.format == "numeric" and q.card.id == "num.block-params"
    value = float(q.card.numeric.value)
    assert value == 12 * q.card.numeric.params["d"] ** 2 + 13 * q.card.numeric.params["d"]
    out = answer_numeric(q, f"{value / 1e6:.4g}M")
    assert out.correct and out.rating == 3 and "12·d² + 13·d" in out.solution
    assert answer_numeric(q, f"{2 * value:.0f}").rating == 1
    ex = question_for(deck, deck["q.kv-cache"])
    assert ex.format == "explain"
    answer, checklist = reveal(ex)
    assert answer and 3 <= len(checklist) <= 5
    assert [self_grade(ex, k).rating for k in (0, 2, 4)] == [1, 2, 3]


def test_chapter_quiz(deck):
    qs = chapter_quiz("transformer-block", n=6, seed=7, deck=deck)
    assert len(qs) == 6 and all(q.card.lesson == "transformer-block" for q in qs)
    assert len({q.card.note_id for q in qs}) == 6
    assert len({q.format for q in qs}) >= 2
    again = chapter_quiz("transformer-block", n=6, seed=7, deck=deck)
    assert [q.card_id for q in qs] == [q.card_id for q in again]
    with pytest.raises(ValueError):
        chapter_quiz("no-such-lesson", deck=deck)


def test_quiz_outcome_feeds_the_scheduler(tmp_path, deck):
    s = StudySession(Store(tmp_path / "p.sqlite3"), deck)
    q = question_for(deck, deck["term.gelu:reverse"], fmt="type")
    out = answer_typed(q, "gelu")
    st = s.rate(q.card_id, out.rating, answer="gelu", mode="quiz")
    assert st.reps == 1


def _read_apkg(path):
    with zipfile.ZipFile(path) as z:
        data = z.read("collection.anki2")
    db = path.with_suffix(".anki2")
    db.write_bytes(data)
    con = sqlite3.connect(db)
    rows = con.execute("SELECT guid, flds FROM notes").fetchall()
    con.close()
    return rows


def test_apkg_export_with_stable_guids(tmp_path, deck):
    r1 = anki.export_apkg(deck, tmp_path / "a.apkg")
    anki.export_apkg(deck, tmp_path / "b.apkg")
    assert r1.notes == len(deck) and "not transferred" in r1.message
    n1, n2 = _read_apkg(tmp_path / "a.apkg"), _read_apkg(tmp_path / "b.apkg")
    assert len(n1) == len(deck)
    assert sorted(g for g, _ in n1) == sorted(g for g, _ in n2)
    guids = {f.split("\x1f")[2]: g for g, f in n1}
    assert guids["term.layer-norm"] == anki.card_guid("term.layer-norm")


def test_import_markdown_and_tsv(tmp_path, deck):
    md = tmp_path / "mine.md"
    md.write_text("# notes\nQ: What does W_O do?\nA: Mixes the heads' outputs\nback together.\n\n"
                  "**Q:** Size of GPT-2's vocabulary?\n**A:** 50257\n")
    tsv = tmp_path / "mine.tsv"
    tsv.write_text("front one\tback one\n# comment\nfront two\tback two\n")
    store = Store(tmp_path / "p.sqlite3")
    ids = anki.import_file(store, md, "notes")
    assert len(ids) == 2
    assert anki.import_file(store, md, "notes") == ids        # re-import: same ids, no duplicates
    anki.import_file(store, tsv, "notes")
    cards = anki.user_cards(store)
    assert len(cards) == 4
    first = next(c for c in cards if c.front == "What does W_O do?")
    assert first.back == "Mixes the heads' outputs\nback together."
    merged = anki.with_user_cards(deck, store)
    assert len(merged) == len(deck) + 4
    s = StudySession(store, merged)
    s.rate(ids[0], 3)
    bad = tmp_path / "bad.md"
    bad.write_text("A: answer first\n")
    with pytest.raises(ValueError, match="bad.md: line 1"):
        anki.import_file(store, bad)
