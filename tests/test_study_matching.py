"""Typed-answer matching and numeric parsing, with hypothesis properties."""

import string

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from minigpt.study.matching import edit_distance, match_answer, normalize, typo_budget
from minigpt.study.numeric import parse_number, parse_shape

words = st.text(alphabet=string.ascii_letters + " -_.,'", min_size=1, max_size=30)
terms = st.lists(st.text(alphabet=string.ascii_lowercase, min_size=2, max_size=10),
                 min_size=1, max_size=3).map(" ".join)


@given(words)
def test_normalize_is_idempotent(text):
    assert normalize(normalize(text)) == normalize(text)


@given(terms)
def test_exact_answer_always_accepted(term):
    assert match_answer(term, term).verdict == "exact"
    assert match_answer(term.upper().replace(" ", "-"), term).verdict == "exact"
    assert match_answer(f"  {term}. ", term).rating == 3


@given(terms, terms)
def test_alias_always_accepted(term, alias):
    assert match_answer(alias, term, aliases=[alias]).correct


@given(terms, terms, st.integers(0, 2))
def test_confusables_always_rejected(term, conf, cut):
    assume(normalize(conf).replace(" ", "") != normalize(term).replace(" ", ""))
    assert match_answer(conf, term, confusables=[conf]).verdict == "wrong"
    assert match_answer(conf.upper(), term, confusables=[conf]).confusable == conf


@settings(max_examples=200)
@given(terms, st.data())
def test_single_typo_in_long_word_is_hard(term, data):
    assume(len(term.replace(" ", "")) >= 4)
    i = data.draw(st.integers(0, len(term) - 1))
    assume(term[i] != " ")
    typo = term[:i] + ("x" if term[i] != "x" else "y") + term[i + 1:]
    r = match_answer(typo, term)
    assert r.verdict == "typo" and r.rating == 2


def test_examples():
    assert match_answer("Layer-Normalisation", "layer normalization").verdict == "exact"
    bn = match_answer("batch normalization", "layer normalization",
                      confusables=["batch normalization"])
    assert bn.verdict == "wrong" and bn.rating == 1 and bn.confusable
    assert match_answer("layr normalizaton", "layer normalization").verdict == "typo"
    assert match_answer("LN", "layer normalization", aliases=["LN"]).verdict == "exact"
    assert match_answer("qeury", "query").verdict == "typo"          # a swap is one edit
    assert match_answer("key", "value").verdict == "wrong"
    assert match_answer("", "value").verdict == "wrong"
    assert typo_budget("gelu") == 1 and typo_budget("kv") == 0 and typo_budget("multihead") == 2
    assert edit_distance("abc", "acb") == 1


def test_diff_marks_missing_and_extra():
    diff = match_answer("layr norm", "layer norm").diff
    assert ("insert", "e") in diff
    assert "".join(t for op, t in diff if op != "delete") == "layer norm"


@pytest.mark.parametrize("text,value", [
    ("7.09M", 7.09e6), ("7,087,872", 7087872), ("7.1e6", 7.1e6), ("0.25", 0.25),
    ("1/4", 0.25), ("25%", 0.25), ("3.2k", 3200), ("1.5B", 1.5e9), ("-2", -2),
    ("0,25", 0.25), ("7.1 × 10^6", 7.1e6), ("≈ 124M", 124e6), ("1_000", 1000),
])
def test_parse_number(text, value):
    assert parse_number(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["", "abc", "1/0", "inf", "7..1"])
def test_parse_number_rejects(text):
    with pytest.raises(ValueError):
        parse_number(text)


def test_parse_shape():
    assert parse_shape("(2, 12, 10, 64)") == (2, 12, 10, 64)
    assert parse_shape("[2,12,10,64]") == parse_shape("2x12x10x64") == (2, 12, 10, 64)
    with pytest.raises(ValueError):
        parse_shape("two by three")
