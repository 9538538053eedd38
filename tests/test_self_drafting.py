"""The calculators of "Decoding at the frontier": a chain's tokens per call and speed-up, a tree of
candidates' expected accepted length (by hand, against every tree of a size, and by drawing),
Medusa's typical acceptance, and the draft cost DeepSeek-V3's figures imply."""

from __future__ import annotations

import itertools
import math

import pytest

from minigpt import lessons
from minigpt.teaching import self_drafting
from minigpt.teaching.examples.catalog import render_example

HITS = ((0.5, 0.2), (0.4, 0.1))  # two heads, two guesses each: small enough to work by hand


def test_a_chain_worked_by_hand():
    # α = 0.8, γ = 4: 1 + 0.8 + 0.64 + 0.512 + 0.4096 = 3.3616 tokens; c = 0.1 → / 1.4
    assert self_drafting.chain_tokens_per_call(0.8, 4) == pytest.approx(3.3616)
    assert self_drafting.chain_speedup(0.8, 4, 0.1) == pytest.approx(3.3616 / 1.4)
    assert self_drafting.chain_speedup(0.5, 1, 0.0) == pytest.approx(1.5)


def test_the_best_gamma_is_where_an_extra_draft_stops_paying():
    # α = 0.6, c = 0.05, by hand: γ=3 gives 2.176/1.15 = 1.892, γ=4 2.3056/1.2 = 1.921, γ=5 2.3834/1.25 = 1.907
    assert self_drafting.best_gamma(0.6, 0.05) == 4
    assert self_drafting.best_gamma(0.9, 0.0) == 32  # a free draft: longer is always better


def test_a_chain_of_top_guesses_is_the_formula():
    alpha = 0.7
    hits = [[alpha]] * 5
    for depth in range(1, 6):
        expected = self_drafting.chain_tokens_per_call(alpha, depth)
        assert 1 + self_drafting.expected_accepted(self_drafting.chain(depth), hits) == pytest.approx(expected)


def test_a_tree_worked_by_hand():
    # nodes: 1 (0.5), 2 (0.2), 1-1 (0.5·0.4 = 0.2), 2-1 (0.2·0.4 = 0.08)
    assert self_drafting.expected_accepted([(0,), (1,), (0, 0), (1, 0)], HITS) == pytest.approx(0.98)
    # the three likeliest: 1 (0.5), then 1-1 and 2 (0.2 each; the tie goes to the lower ranks)
    assert self_drafting.best_tree(HITS, 3) == [(0,), (0, 0), (1,)]
    assert self_drafting.expected_accepted(self_drafting.best_tree(HITS, 3), HITS) == pytest.approx(0.9)


def all_trees(hits, size):
    nodes = [n for d in range(1, len(hits) + 1) for n in itertools.product(*(range(len(hits[i])) for i in range(d)))]
    for subset in itertools.combinations(nodes, size):
        present = set(subset)
        if all(len(n) == 1 or n[:-1] in present for n in subset):
            yield subset


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
def test_the_greedy_tree_is_the_best_of_every_tree_of_its_size(size):
    hits = ((0.5, 0.2, 0.1), (0.3, 0.25), (0.6, 0.1))
    best = max(self_drafting.expected_accepted(t, hits) for t in all_trees(hits, size))
    assert self_drafting.expected_accepted(self_drafting.best_tree(hits, size), hits) == pytest.approx(best)


def test_drawing_the_right_ranks_agrees_with_the_sum():
    from minigpt.teaching.examples.decoding_frontier import RANK_HITS

    for size in (1, 4, 16):
        tree = self_drafting.best_tree(RANK_HITS, size)
        # the standard error of 20,000 draws of a length at most 4 is below 0.01
        assert self_drafting.simulate_tree(tree, RANK_HITS, 20_000, seed=size) == pytest.approx(
            self_drafting.expected_accepted(tree, RANK_HITS), abs=0.04)


def test_bad_trees_and_rates_are_refused():
    with pytest.raises(ValueError, match="parent"):
        self_drafting.expected_accepted([(0, 0)], HITS)
    with pytest.raises(ValueError, match="no head"):
        self_drafting.expected_accepted([(0,), (0, 0), (0, 0, 0)], HITS)
    with pytest.raises(ValueError, match="add up"):
        self_drafting.expected_accepted([(0,)], [[0.8, 0.3]])


def test_typical_acceptance_by_hand():
    flat = [0.25] * 4  # H = ln 4, so δ·exp(−H) = 0.3 / 4 = 0.075 < ε
    assert self_drafting.typical_threshold(flat, 0.09, 0.3) == pytest.approx(0.075)
    assert all(self_drafting.typical_accepts(flat, i, 0.09, 0.3) for i in range(4))
    sure = [0.95, 0.03, 0.02]  # H ≈ 0.232: δ·exp(−H) ≈ 0.238, so the floor ε = 0.09 is the bar
    assert self_drafting.typical_threshold(sure, 0.09, 0.3) == 0.09
    assert [self_drafting.typical_accepts(sure, i, 0.09, 0.3) for i in range(3)] == [True, False, False]


def test_deepseek_figures_imply_a_few_percent_per_round():
    # 1 + α tokens a call at γ = 1; 1.8× reported: c = (1 + α)/1.8 − 1
    assert self_drafting.implied_draft_cost(0.85, 1, 1.8) == pytest.approx(1.85 / 1.8 - 1)
    assert self_drafting.implied_draft_cost(0.90, 1, 1.8) == pytest.approx(0.1 / 1.8)
    shown = render_example("frontier_decoding.mtp")
    assert "| 85% | 1.85 | 1.8× | 0.028 |" in shown and "| 90% | 1.90 | 1.8× | 0.056 |" in shown


def test_the_lesson_shows_the_worked_numbers():
    chain = render_example("frontier_decoding.chain")
    assert "| α = 0.8 | tokens | 1.80 | 2.44 | 2.95 | 3.69 | 4.33 |" in chain
    assert "α = 0.6: γ = 4, 1.92×" in chain
    tree = render_example("frontier_decoding.tree")
    assert "| 1 | 1.600 | 1.600 | 1 |" in tree and "| 2 | 1.870 | 1.870 | 2 |" in tree  # 1 + 0.6 + 0.6·0.45
    rows = {r.split(" | ")[0].strip("| "): r.split(" | ") for r in render_example("frontier_decoding.typical").splitlines()
            if r.startswith("| .")}
    for ctx, (_, entropy, bar, _kept, _) in rows.items():  # each bar is min(ε, δ·exp(−H)) of its row's H
        assert float(bar) == pytest.approx(min(0.09, 0.3 * math.exp(-float(entropy))), abs=2e-3), ctx
    assert int(rows["."][3]) > 10 and int(rows[".chr"][3]) == 1  # unsure: many pass; sure: one
    lesson = next(x for x in lessons.load_lessons() if x.id == "decoding-frontier")
    assert lesson.order == 212 and len(lesson.example_ids()) >= 5 and lesson.snippets()
