"""The calculators behind the serving-systems, long-context-at-scale and training-at-scale lessons,
each pinned against a paper's figure or a computation worked by hand here."""

from __future__ import annotations

import math

import pytest
import torch

from minigpt import lessons as L
from minigpt.teaching import long_context_scale, parallelism, serving, serving_sim, training_scale

LESSONS = {"serving-systems": 211, "long-context-scale": 213, "training-at-scale": 178}
# round numbers so every step can be worked by hand
TOY = serving_sim.Gpu(n_params=1e9, weight_bytes=2e9, kv_bytes_per_token=1e5, flops_per_s=1e12,
             bytes_per_s=1e12, host_bytes_per_s=1e10)


def test_the_lessons_sit_in_the_track_with_examples_and_a_snippet():
    lessons = {l.id: l for l in L.load_lessons()}
    for lesson_id, order in LESSONS.items():
        lesson = lessons[lesson_id]
        assert lesson.order == order
        assert len(lesson.example_ids()) >= 4 and lesson.snippets()


# --- serving -----------------------------------------------------------------------------------


def test_a_step_is_the_roofline_of_serving_timing():
    t = serving.timing(TOY.n_params, batch=8, prompt=500, context=300, kv_bytes_per_token=1e5,
                 flops_per_s=1e12, bytes_per_s=1e12)
    assert serving_sim.step_seconds(TOY, 0, 8, 8 * 300) == pytest.approx(t.tpot_s)
    assert serving_sim.step_seconds(TOY, 500, 0, 0) == pytest.approx(t.ttft_s)


def test_one_request_worked_by_hand():
    # prefill: 2e9·1000/1e12 = 2 s of compute; then two decode steps reading 1001 and 1002 tokens
    rep = serving_sim.simulate((serving_sim.Job(0.0, 1000, 3),), TOY, max_batch=4, kv_budget_tokens=10_000)
    assert rep.ttft == [pytest.approx(2.0)]
    assert rep.tpot == [pytest.approx((2.1001e-3 + 2.1002e-3) / 2)]
    assert rep.tokens == 3 and rep.makespan == pytest.approx(2.0 + 2.1001e-3 + 2.1002e-3)


@pytest.mark.parametrize("mode", ["recompute", "swap"])
def test_preemption_worked_by_hand(mode):
    # Budget 24: both 10-token prompts fit (10+1, then 10+1+10+1 = 22). After two tokens each
    # they hold 12 + 12 and need 2 more slots: 26 > 24, so B (the newest) is preempted with 12.
    jobs = (serving_sim.Job(0.0, 10, 5), serving_sim.Job(0.0, 10, 5))
    rep = serving_sim.simulate(jobs, TOY, max_batch=2, kv_budget_tokens=24, preempt=mode)
    assert rep.preemptions == 1 and rep.tokens == 10
    if mode == "recompute":
        assert rep.recomputed_tokens == 12 and rep.swap_seconds == 0
    else:   # 12 tokens out, 12 back in
        assert rep.recomputed_tokens == 0
        assert rep.swap_seconds == pytest.approx(24 * 1e5 / 1e10)


def test_simulate_refuses_what_it_cannot_serve():
    with pytest.raises(ValueError, match="preemption"):
        serving_sim.simulate((serving_sim.Job(0, 1, 1),), TOY, 1, 10, preempt="drop")
    with pytest.raises(ValueError, match="KV budget"):
        serving_sim.simulate((serving_sim.Job(0, 100, 1),), TOY, 1, 50)


def test_goodput_peaks_inside_the_sweep_while_throughput_keeps_rising():
    from minigpt.teaching.examples import serving_systems

    sweep = serving_systems.batch_sweep()
    good = [r.goodput(serving_systems.TTFT_SLO, serving_systems.TPOT_SLO) for r in sweep.values()]
    tput = [r.throughput for r in sweep.values()]
    assert 0 < good.index(max(good)) < len(good) - 1
    assert tput == sorted(tput)
    for r in sweep.values():
        assert r.goodput(serving_systems.TTFT_SLO, serving_systems.TPOT_SLO) == r.met(serving_systems.TTFT_SLO, serving_systems.TPOT_SLO) / r.makespan


def test_prefix_tree_counts_by_hand_and_against_one_shared_prefix():
    tree = serving_sim.RadixCache()
    assert [tree.insert(p) for p in ((1, 2, 3), (1, 2, 4), (1, 5), (1, 2, 3))] == [0, 2, 1, 3]
    assert tree.stored == 5
    # 10 chats × 4 turns: Σ (1000 + 100k) = 50,000 without; 1000 + 40·100 = 5,000 with the tree
    assert serving_sim.prefill_with_tree(serving_sim.chat_prompts(1000, 4, 100, 10)) == (50_000, 5_000)
    one_turn = serving_sim.chat_prompts(system=300, turns=1, turn_tokens=50, chats=7)
    assert serving_sim.prefill_with_tree(one_turn)[1] == serving.prefix_saving(300, 50, 7).prefill_with


def test_reload_and_recompute_cross_where_the_link_matches_prefill():
    tokens = 1000
    reload, redo = serving_sim.reload_or_recompute_s(TOY, tokens)
    assert reload == pytest.approx(tokens * 1e5 / 1e10) and redo == pytest.approx(2.0)
    crossover = TOY.kv_bytes_per_token * TOY.flops_per_s / (2 * TOY.n_params)   # 5e7 B/s
    at = serving_sim.Gpu(**{**TOY.__dict__, "host_bytes_per_s": crossover})
    assert serving_sim.reload_or_recompute_s(at, tokens)[0] == pytest.approx(redo)


# --- long context ------------------------------------------------------------------------------


def test_nsa_counts_match_the_paper():
    # Yuan et al. 2025, the decoding table: keys read and the speed-up over full attention
    paper = {8192: (2048, 4.0), 16384: (2560, 6.4), 32768: (3584, 9.1), 65536: (5632, 11.6)}
    for s, (keys, speedup) in paper.items():
        assert long_context_scale.nsa_tokens(s) == keys
        assert round(s / keys, 1) == speedup


def test_ring_attention_overlap_rule_is_f_over_b():
    # Liu et al. 2023: with full keys and values a block must hold at least F/B tokens
    assert long_context_scale.min_block_for_overlap(4096, 4096, 312e12, 300e9) == pytest.approx(312e12 / 300e9)
    compute, send = long_context_scale.ring_round(65536, 8, 4096, 1024, 1e15, 50e9)
    assert compute == pytest.approx(4 * 8192**2 * 4096 / 1e15)
    assert send == pytest.approx(2 * 8192 * 1024 * 2 / 50e9)
    b = long_context_scale.min_block_for_overlap(4096, 1024, 1e15, 50e9)
    c, s = long_context_scale.ring_round(int(b * 8), 8, 4096, 1024, 1e15, 50e9)
    assert c == pytest.approx(s)


def test_interleaved_cache_share_by_hand():
    assert long_context_scale.interleaved_cache_share(32768, 1024, 5) == pytest.approx((5 * 1024 + 32768) / 196608)
    assert long_context_scale.interleaved_cache_share(2048, 4096, 1) == 1.0   # the window covers it all
    assert long_context_scale.interleaved_cache_share(10**9, 1024, 5) == pytest.approx(1 / 6, rel=1e-5)


def test_state_sizes_and_the_hybrid_cache():
    assert long_context_scale.mamba2_state(4096) == 2 * 4096 * 128
    assert long_context_scale.deltanet_state(32, 128, 128) == 524_288
    assert long_context_scale.kv_numbers(256, 8, 128) == long_context_scale.deltanet_state(32, 128, 128)
    hybrid = long_context_scale.hybrid_cache_numbers(131072, 48, 4, 8, 128, 524_288)
    assert hybrid == 12 * 2 * 131072 * 8 * 128 + 36 * 524_288


def test_ssd_recurrence_equals_the_masked_matrix():
    a = torch.tensor([0.5, 0.5], dtype=torch.float64)
    one = torch.ones(2, 1, dtype=torch.float64)
    assert long_context_scale.ssd_matrix(a, one, one).tolist() == [[1.0, 0.0], [0.5, 1.0]]
    g = torch.Generator().manual_seed(3)
    a = 0.5 + 0.5 * torch.rand(7, generator=g, dtype=torch.float64)
    b, c = (torch.randn(7, 4, generator=g, dtype=torch.float64) for _ in range(2))
    x = torch.randn(7, generator=g, dtype=torch.float64)
    assert torch.allclose(long_context_scale.ssd_recurrent(a, b, c, x), long_context_scale.ssd_matrix(a, b, c) @ x, atol=1e-12)


def test_the_delta_rule_overwrites_where_linear_attention_adds():
    assert long_context_scale.recall_after_overwrite() == ([1.0, 1.0], [0.0, 1.0])
    half = long_context_scale.recall_after_overwrite(beta=0.5)[1]   # half erased, half written: (0.25, 0.5)
    assert half == pytest.approx([0.25, 0.5])


# --- training ----------------------------------------------------------------------------------


def test_schedules_agree_with_the_parallelism_lesson_and_zero_bubble():
    for p, m in ((4, 8), (8, 32), (16, 16)):
        assert training_scale.schedule_bubble(p, m, "1f1b") == pytest.approx(parallelism.bubble_fraction(p, m))
        assert training_scale.schedule_bubble(p, m, "interleaved", v=4) == pytest.approx(
            parallelism.interleaved_bubble_fraction(p, m, 4))
    # Qi et al. 2023: with F = B = W, ZB-H1's idle time is a third of 1F1B's
    idle = {s: training_scale.schedule_bubble(4, 8, s) / (1 - training_scale.schedule_bubble(4, 8, s))
            for s in ("1f1b", "zb-h1")}
    assert idle["zb-h1"] == pytest.approx(idle["1f1b"] / 3)
    assert training_scale.schedule_bubble(4, 8, "zb-h2") == 0
    assert [training_scale.activations_held(4, 8, s) for s in ("gpipe", "1f1b", "zb-h1", "zb-h2")] == [8, 4, 4, 7]


def test_a_plan_memory_worked_by_hand():
    from minigpt.teaching.examples.training_scale import CLUSTER, JOB

    pl = training_scale.plan(JOB, CLUSTER, 8, 16, 4)
    shard = 70e9 / 128
    states = 2 * shard + 2 * shard + 12 * shard / 4
    per_layer = 4096 * 8192 * (34 + 5 * 64 * 4096 / 8192) / 8   # sequence parallel over t = 8
    assert pl.memory == pytest.approx(states + per_layer * 5 * 16)   # 5 layers, 16 in flight
    plans = training_scale.search(JOB, CLUSTER)
    assert all(p.t * p.p * p.d == 512 and 8 % p.t == 0 for p in plans)
    fitting = [p for p in plans if p.fits]
    assert plans[0] == min(fitting, key=lambda p: p.step_s)
    assert all(p.memory <= 80e9 for p in fitting) and len(fitting) < len(plans)


def test_stability_numbers_by_hand():
    assert training_scale.z_loss([0.0, 0.0]) == pytest.approx(1e-4 * math.log(2) ** 2)
    assert training_scale.z_loss([50.0, 50.0]) == pytest.approx(1e-4 * (50 + math.log(2)) ** 2)
    assert training_scale.soft_cap(30 * math.atanh(0.5), 30) == pytest.approx(15)
    assert abs(training_scale.soft_cap(1e6, 50)) <= 50
    q = torch.full((128,), 1.0, dtype=torch.float64)   # RMS 1: length √128
    assert (q @ q).item() / math.sqrt(128) == pytest.approx(training_scale.max_qk_logit(128))


def test_mup_rules_follow_the_table():
    # Yang et al. 2022, table 3 (Adam): hidden init var 1/fan_in and lr 1/fan_in;
    # output init var 1/fan_in², lr 1/fan_in; input and embeddings unchanged
    assert training_scale.mup_multipliers("hidden matrix", 16) == pytest.approx((0.25, 1 / 16))
    assert training_scale.mup_multipliers("output (unembedding)", 16) == pytest.approx((1 / 16, 1 / 16))
    assert training_scale.mup_multipliers("embedding / input", 16) == (1.0, 1.0)


def test_the_bias_balances_experts_and_nothing_else_does():
    with_bias = training_scale.bias_balancing()
    without = training_scale.bias_balancing(gamma=0.0)
    assert with_bias[0] == without[0]   # the same first batch before any update
    assert sum(with_bias[-10:]) / 10 < 1.25 < min(without[-10:])


def test_the_balance_example_shows_the_all_to_all_worked_by_hand():
    from minigpt.teaching.examples.catalog import render_example

    # 2 trips · 4,096 tokens · 8 experts · 7,168 values · 2 bytes · 63/64 leave the GPU
    sent = 2 * 4096 * 8 * 7168 * 2 * 63 / 64
    assert f"{sent / 2**20:,.0f} MiB" == "882 MiB"
    assert "882 MiB sent per GPU" in render_example("train_scale.balance")


def test_serving_and_ring_examples_worked_by_hand():
    from minigpt.teaching.examples.catalog import render_example

    n = 6_738_415_616 - 32_000 * 4096          # LLaMA-2 7B without its lookup table
    kv = 2 * 32 * 32 * 128 * 2                  # 512 KiB a token
    assert f"{kv * 1e15 / (2 * n) / 1e9:.0f}" == "40"
    assert "more than 40 GB/s" in render_example("serving_sys.offload")
    decode = (2 * n + 32 * 1500 * kv) / 3e12    # 32 sequences of 1,500 tokens: memory-bound
    with_prefill = 2 * n * (2048 + 32) / 1e15   # a 2,048-token prompt makes it compute-bound
    text = render_example("serving_sys.interference")
    assert f"| decode only | {decode * 1e3:.1f} |" in text and f"{decode * 1e3:.1f}" == "12.8"
    assert f"| {with_prefill * 1e3:.1f} |" in text and f"{with_prefill * 1e3:.1f}" == "27.5"
    # ring, c = 8 over 131,072 tokens: 4·16,384²·8,192 FLOPs; 2·16,384·1,024·2 bytes
    ring = render_example("long_scale.ring")
    assert "| 8 | 16,384 | 8.80 | 1.342 |" in ring
