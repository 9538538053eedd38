"""The lessons on reasoning models, evaluation and LLM system design (issue 51): every number they
show pinned against a count by brute force, a value worked by hand, autograd or a simulation,
their place in the track, and their cards' numbers."""

from __future__ import annotations

import math
import random
from itertools import combinations
from pathlib import Path

import pytest
import torch

from minigpt import lessons as L
from minigpt.study.decks import load_decks
from minigpt.teaching import evaluation as EV
from minigpt.teaching import kv_memory, reasoning, system_design
from minigpt.teaching.examples.catalog import render_example

LESSONS = {"reasoning-models": 238, "evaluation": 239, "llm-system-design": 241}
DECK = Path(__file__).resolve().parents[1] / "lessons" / "decks" / "frontier-reasoning.toml"


# --- pass@k ----------------------------------------------------------------------------------


def _pass_at_k_by_subsets(n: int, c: int, k: int) -> float:
    """Every k-subset of n samples (the first c right) counted: the share holding a right one."""
    subsets = list(combinations(range(n), k))
    return sum(any(i < c for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", [1, 4, 7])
def test_pass_at_k_equals_counting_every_subset(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert reasoning.pass_at_k(n, c, k) == pytest.approx(_pass_at_k_by_subsets(n, c, k))


def test_pass_at_k_matches_chen_et_al_stable_product_at_n_200():
    # Chen et al. 2021, figure 3's numpy code: 1 − Π_{i=n−c+1}^{n} (1 − k/i)
    for c, k in [(2, 10), (20, 1), (20, 100), (150, 10)]:
        product = math.prod(1 - k / i for i in range(200 - c + 1, 201))
        assert reasoning.pass_at_k(200, c, k) == pytest.approx(1 - product)
    assert reasoning.pass_at_k(200, 2, 10) == pytest.approx(1 - 190 * 189 / (200 * 199))


def test_the_plug_in_estimate_is_lower_for_every_k_above_one():
    for c in range(1, 10):
        assert reasoning.pass_at_k_plugin(10, c, 1) == pytest.approx(reasoning.pass_at_k(10, c, 1))
        for k in range(2, 11):
            assert reasoning.pass_at_k_plugin(10, c, k) < reasoning.pass_at_k(10, c, k)
    assert reasoning.pass_at_k(10, 1, 5) == pytest.approx(0.5)       # the card: 1 − 126/252
    assert reasoning.pass_at_k_plugin(10, 1, 5) == pytest.approx(1 - 0.9 ** 5)  # ≈ 0.41
    assert reasoning.pass_at_k(10, 3, 8) == 1.0


def test_pass_at_k_refuses_impossible_counts():
    with pytest.raises(ValueError, match="0 ≤ c ≤ n"):
        reasoning.pass_at_k(5, 6, 1)


# --- voting and verifiers ----------------------------------------------------------------------


def test_majority_of_three_by_hand():
    # right wins with two or three votes, or a three-way tie settled by a fair draw (1/3)
    p, q, r = 0.4, 0.35, 0.25
    by_hand = 3 * p * p * (1 - p) + p ** 3 + 6 * p * q * r / 3
    assert reasoning.majority_vote_accuracy({"right": p, "x": q, "y": r}, "right", 3) == pytest.approx(by_hand)
    assert by_hand == pytest.approx(0.422)
    assert reasoning.majority_vote_accuracy({"right": p, "x": q, "y": r}, "right", 1) == pytest.approx(p)


def test_voting_helps_only_when_the_right_answer_is_the_mode():
    good, bad = ({"right": 0.4, "x": 0.35, "y": 0.25}, {"right": 0.3, "x": 0.5, "y": 0.2})
    rising = [reasoning.majority_vote_accuracy(good, "right", n) for n in (1, 3, 5, 7)]
    falling = [reasoning.majority_vote_accuracy(bad, "right", n) for n in (1, 3, 5, 7)]
    assert rising == sorted(rising) and falling == sorted(falling, reverse=True)
    assert reasoning.best_of_n_with_verifier(0.4, 3) == pytest.approx(0.784)


# --- GRPO, DAPO, Dr. GRPO ---------------------------------------------------------------------


def _objective(method, rewards, lengths, logps, constant=2048):
    """The three objectives written out as the papers do, at ratio 1 (π = π_old), ε = 0.2."""
    g = len(rewards)
    mean = sum(rewards) / g
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / g)
    adv = [(r - mean) / std for r in rewards] if method != "Dr. GRPO" else [r - mean for r in rewards]
    eps_high = 0.28 if method == "DAPO" else 0.2
    terms = []
    for a, lp in zip(adv, logps, strict=True):
        ratio = torch.exp(lp - lp.detach())
        terms.append(torch.minimum(ratio * a, ratio.clamp(0.8, 1 + eps_high) * a))
    if method == "GRPO":
        return sum(t.sum() / len(t) for t in terms) / g
    if method == "DAPO":
        return sum(t.sum() for t in terms) / sum(lengths)
    return sum(t.sum() for t in terms) / (g * constant)


@pytest.mark.parametrize("method", ["GRPO", "DAPO", "Dr. GRPO"])
def test_token_weights_are_the_objectives_gradients(method):
    rewards, lengths = [1.0, 1.0, 0.0, 0.0], [200, 800, 300, 1600]
    logps = [torch.full((n,), -1.0, dtype=torch.float64, requires_grad=True) for n in lengths]
    _objective(method, rewards, lengths, logps).backward()
    weights = reasoning.token_weights(rewards, lengths, method, constant=2048)
    for lp, w in zip(logps, weights, strict=True):
        assert lp.grad.tolist() == pytest.approx([w] * len(lp))


def test_token_weights_by_hand():
    rewards, lengths = [1.0, 1.0, 0.0, 0.0], [200, 800, 300, 1600]  # advantages ±1
    assert reasoning.token_weights(rewards, lengths, "GRPO") == pytest.approx(
        [1 / 800, 1 / 3200, -1 / 1200, -1 / 6400])
    assert reasoning.token_weights(rewards, lengths, "DAPO") == pytest.approx(
        [1 / 2900, 1 / 2900, -1 / 2900, -1 / 2900])
    assert reasoning.token_weights(rewards, lengths, "Dr. GRPO", 2048) == pytest.approx(
        [0.5 / 8192, 0.5 / 8192, -0.5 / 8192, -0.5 / 8192])
    with pytest.raises(ValueError, match="constant"):
        reasoning.token_weights(rewards, lengths, "Dr. GRPO")


def test_grpo_advantage_of_a_lone_success_is_sqrt_of_failures_over_successes():
    for right in (1, 4, 7):
        rewards = [1.0] * right + [0.0] * (8 - right)
        assert reasoning.grpo_advantages(rewards)[0] == pytest.approx(math.sqrt((8 - right) / right))
        assert reasoning.dr_grpo_advantages(rewards)[0] == pytest.approx(1 - right / 8)
    assert reasoning.grpo_advantages([1.0] * 4) == [0.0] * 4
    assert not reasoning.informative([1.0] * 4) and reasoning.informative([1.0, 0.0])


def test_dapo_clip_and_overlong_penalty_by_hand():
    assert reasoning.clip_range(0.01, 0.2, 0.28) == pytest.approx((0.008, 0.0128))
    # DAPO: L_max 20,480, L_cache 4,096: the soft zone starts at 16,384
    assert [reasoning.overlong_penalty(n, 20480, 4096) for n in (12000, 16384, 18432, 20480, 21000)] \
        == pytest.approx([0.0, 0.0, -0.5, -1.0, -1.0])


def test_prm_scores_by_hand_and_the_example_picks():
    assert reasoning.prm_score([0.99, 0.6, 0.95, 0.95]) == pytest.approx(0.99 * 0.6 * 0.95 * 0.95)
    assert reasoning.prm_score([0.8, 0.8, 0.75, 0.8], "min") == 0.75
    assert "picks C by the product and B by the weakest" in render_example("reasoning.prm")


# --- evaluation -------------------------------------------------------------------------------


def test_ngram_overlap_of_the_lessons_items_by_hand():
    from minigpt.teaching.examples import evaluation as X

    copied, reworded, fresh = (t for _, t in X.TEST_ITEMS)
    assert EV.ngram_overlap(copied, X.TRAINING_TEXT, 8) == 1.0
    # 13 words, 11 trigrams; only "at 3 pm" is in the training text
    assert EV.ngram_overlap(reworded, X.TRAINING_TEXT, 3) == pytest.approx(1 / 11)
    assert EV.ngram_overlap(reworded, X.TRAINING_TEXT, 8) == 0.0
    assert EV.ngram_overlap(fresh, X.TRAINING_TEXT, 3) == 0.0
    assert EV.ngram_overlap("too short", X.TRAINING_TEXT, 8) == 0.0


def test_swap_report_counts_by_hand():
    from minigpt.teaching.examples import evaluation as X

    rep = EV.swap_report(X.JUDGE_VERDICTS)
    assert (rep.consistent, rep.first_both, rep.second_both, rep.total) == (5, 4, 1, 10)


def test_ece_worked_by_hand_on_four_bins():
    from minigpt.teaching.examples import evaluation as X

    bins = EV.calibration_bins(X.CONFIDENCES, X.CORRECT, 4)
    assert [b.count for b in bins] == [2, 2, 4, 4]
    assert [b.accuracy for b in bins] == pytest.approx([0, 0.5, 0.75, 0.75])
    assert [b.confidence for b in bins] == pytest.approx([0.15, 0.325, 0.625, 0.875])
    by_hand = 2 / 12 * 0.15 + 2 / 12 * 0.175 + 4 / 12 * 0.125 + 4 / 12 * 0.125
    assert EV.expected_calibration_error(X.CONFIDENCES, X.CORRECT, 4) == pytest.approx(by_hand)
    assert by_hand == pytest.approx(0.1375)  # the card's answer


def test_calibration_bin_edges_and_a_perfect_model():
    bins = EV.calibration_bins([0.25, 1.0, 0.0], [True, True, False], 4)
    assert [b.count for b in bins] == [1, 1, 0, 1]
    assert EV.expected_calibration_error([1.0, 0.0], [True, False], 10) == 0.0


def test_standard_error_by_hand():
    assert EV.standard_error(0.7, 100) == pytest.approx(math.sqrt(0.21) / 10)  # 4.58 points
    assert 1.96 * EV.standard_error(0.7, 500) * 100 == pytest.approx(4.0, abs=0.05)


# --- system design ----------------------------------------------------------------------------


def test_the_lessons_requirements_are_the_calculators_inputs():
    assert system_design.TARGET == system_design.Workload(10, 1000, 250, 0.050, 1.0)
    assert (system_design.H100.memory_bytes, system_design.H100.bytes_per_s, system_design.H100.flops_per_s,
            system_design.H100.dollars_per_hour) == (80e9, 3.35e12, 989e12, 2.50)
    assert (system_design.MEMORY_RESERVE, system_design.BANDWIDTH_EFFICIENCY, system_design.PREFILL_MFU) == (0.10, 0.7, 0.5)


def test_memory_by_hand_and_against_the_kv_lesson():
    m = system_design.LLAMA2_70B
    assert system_design.weight_bytes(m) == 140e9
    llama = next(s for s in kv_memory.MODELS if s.name == "LLaMA-2 70B")
    assert system_design.kv_bytes_per_token(m) == kv_memory.shape_bytes_per_token(llama) == 2 * 80 * 8 * 128 * 2
    full = 1250 * 327680
    assert system_design.max_batch_from_memory(m, system_design.H100, 1, 1250) == 0
    assert system_design.max_batch_from_memory(m, system_design.H100, 2, 1250) == math.floor(4e9 / full) == 9
    assert system_design.max_batch_from_memory(m, system_design.H100, 4, 1250) == math.floor(148e9 / full) == 361


def test_step_and_prefill_times_by_hand():
    m, g = system_design.LLAMA2_70B, system_design.H100
    assert system_design.decode_step_s(m, g, 4, 0, 1125) == pytest.approx(140e9 / (4 * 3.35e12 * 0.7))
    assert system_design.decode_step_s(m, g, 4, 10, 1125) == pytest.approx(
        (140e9 + 10 * 1125 * 327680) / (4 * 3.35e12 * 0.7))
    assert system_design.prefill_s(m, g, 4, 1000) == pytest.approx(2 * 70e9 * 1000 / (4 * 989e12 * 0.5))
    assert system_design.decode_compute_s(m, g, 4, 32) < system_design.decode_step_s(m, g, 4, 32, 1125) / 5


def test_the_m_d_1_wait_matches_a_simulated_queue():
    rng = random.Random(0)
    rate, service, clock, free_at, waits = 5.0, 0.07, 0.0, 0.0, []
    for _ in range(100_000):  # Lindley: each waits for the one before to finish
        clock += rng.expovariate(rate)
        start = max(clock, free_at)
        waits.append(start - clock)
        free_at = start + service
    assert sum(waits) / len(waits) == pytest.approx(system_design.prefill_wait_s(rate * service, service),
                                                    rel=0.05)


def test_a_design_satisfies_littles_law_and_the_stretched_step():
    m, g, w = system_design.LLAMA2_70B, system_design.H100, system_design.TARGET
    for tp, replicas in [(4, 1), (4, 2), (8, 1), (2, 11)]:
        d = system_design.design(m, g, w, tp, replicas)
        assert d.batch == pytest.approx(d.requests_per_s * (d.prefill_s + 250 * d.tpot_s))
        assert d.step_s == pytest.approx(system_design.decode_step_s(m, g, tp, d.batch, 1125))
        assert d.tpot_s == pytest.approx(d.step_s / (1 - d.prefill_share))
        assert d.prefill_share == pytest.approx(10 / replicas * system_design.prefill_s(m, g, tp, 1000))
    assert system_design.design(m, g, w, 1, 1) is None or not system_design.design(m, g, w, 1, 1).meets(w)


def test_the_lessons_design_claims():
    m, g, w = system_design.LLAMA2_70B, system_design.H100, system_design.TARGET
    assert not system_design.design(m, g, w, 4, 1).meets(w)  # one replica of four: TPOT too long
    found = {d.tp: d for d in system_design.cheapest(m, g, w)}
    assert 1 not in found  # one GPU cannot hold the weights
    assert (found[4].replicas, found[8].replicas) == (2, 1) and found[4].gpus == found[8].gpus
    assert found[2].gpus > found[4].gpus  # the smallest degree is the worst buy
    assert "Chosen: 2 × TP 4, 8 GPUs." in render_example("design.replicas")
    prompt, output = system_design.gpu_seconds_per_token(found[4], w)
    assert output > 3 * prompt  # "several times"


def test_cost_per_million_tokens_by_hand():
    assert system_design.dollars_per_million_tokens(8, system_design.H100, 2500) == pytest.approx(20 / 9)  # the card
    assert "| 10 | 4 × 2 | 8 | 2.22 | 0.444 |" in render_example("design.cost")


# --- the lessons and their cards --------------------------------------------------------------


def test_the_lessons_are_in_the_track_with_examples_and_snippets():
    lessons = {l.id: l for l in L.load_lessons()}
    for lesson_id, order in LESSONS.items():
        lesson = lessons[lesson_id]
        assert lesson.order == order and lesson.example_ids() and lesson.snippets()
    ordered = [l.id for l in sorted(lessons.values(), key=lambda l: l.order)]
    assert ordered.index("after-pretraining") < ordered.index("reasoning-models")


def test_every_card_of_the_deck_belongs_to_these_lessons():
    mine = [c for c in load_decks() if Path(c.source).name == DECK.name]
    assert {c.lesson for c in mine} == set(LESSONS)
    for lesson_id in LESSONS:
        notes = {c.id.split(":")[0] for c in mine if c.lesson == lesson_id}
        assert len(notes) >= 6, lesson_id
