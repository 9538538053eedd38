"""The pieces the round-4 audit found missing inside lessons 177, 208, 209, 236 and 237: each
worked number against a value worked here by hand, and each lesson naming what it now teaches."""

from __future__ import annotations

import math

import pytest
import torch

from minigpt.lessons import load_lessons
from minigpt.teaching import parallelism, ptq, rl_maths, serving, speculative
from minigpt.teaching.examples import catalog  # noqa: F401 (registers every example)
from minigpt.teaching.examples.registry import render_example

GiB, MiB = 2**30, 2**20


def _lesson(lesson_id: str) -> str:
    body = next(lesson.body for lesson in load_lessons() if lesson.id == lesson_id)
    return " ".join(body.split())


# ---------------------------------------------------------------------------- 177 parallelism


def test_interleaved_and_1f1b_by_hand():
    assert parallelism.interleaved_bubble_fraction(4, 8, 1) == parallelism.bubble_fraction(4, 8) == 3 / 11
    assert parallelism.interleaved_bubble_fraction(4, 8, 2) == 3 / 19
    assert parallelism.interleaved_bubble_fraction(4, 8, 4) == 3 / 35
    assert parallelism.micro_batches_held(4, 16, "gpipe") == 16 and parallelism.micro_batches_held(4, 16, "1f1b") == 4
    assert parallelism.micro_batches_held(4, 2, "1f1b") == 2
    assert f"| 8 | {3 / 11:.3f} | {3 / 19:.3f} | {3 / 35:.3f} | 8 | 4 |" in render_example(
        "parallel.schedules")


def test_sequence_context_expert_parallelism_by_hand():
    sbh = 2048 * 1 * 12288
    scores = 5 * 96 * 2048 / 12288  # 80
    alone, tensor, both = sbh * (34 + scores), sbh * (10 + 24 / 8 + scores / 8), sbh * (34 + scores) / 8
    assert (alone, tensor, both) == (sbh * 114, sbh * 23, sbh * 14.25)
    text = render_example("parallel.sequence_expert")
    for label, value in (("no model parallelism", alone), ("tensor parallel, t = 8", tensor),
                         ("tensor + sequence parallel, t = 8", both)):
        assert f"| {label} | {value / GiB:.2f} |" in text
    ring = 7 * 2 * (131072 // 8) * 1024 * 2  # 7 other blocks of K and V, 16 bits
    assert ring == 448 * MiB and "receives 448 MiB" in text
    experts = 2 * 4096 * 2 * 4096 * 2 * 7 / 8  # there and back, top-2, 16 bits, 7/8 leave
    assert experts == 112 * MiB and "send 112 MiB" in text


# ---------------------------------------------------------------------------- 209 speculative


def test_walltime_speedup_by_hand_and_its_best_draft_length():
    by_hand = (1 - 0.8 ** 5) / ((1 - 0.8) * (0.1 * 4 + 1))
    assert speculative.walltime_speedup(0.8, 4, 0.1) == pytest.approx(by_hand) == pytest.approx(2.4011, abs=1e-4)
    assert speculative.walltime_speedup(0.8, 4, 0.0) == pytest.approx(speculative.expected_tokens_per_call(0.8, 4))
    text = render_example("speculative.walltime")
    assert "| c = 0.1 | 1.64 | 2.03 | 2.40 | 2.40 |" in text
    best = max(range(1, 17), key=lambda k: (1 - 0.8 ** (k + 1)) / (0.2 * (0.3 * k + 1)))
    assert f"{best} for c = 0.3" in text


# ---------------------------------------------------------------------------- 208 serving


def test_ttft_tpot_and_moving_a_cache_by_hand():
    n = 6_607_343_616  # LLaMA-2 7B less its token table (the head is a multiply)
    kv = 2 * 32 * 4096 * 2  # bytes per token: K and V, 32 layers, width 4,096, 16 bits
    ttft = 2 * n * 1000 / 1e15
    tpot = (2 * n + 1500 * kv) / 3e12  # batch 1: weights plus one cache, memory-bound
    t = serving.timing(n, 1, 1000, 1500, kv, 1e15, 3e12)
    assert t.ttft_s == pytest.approx(ttft) and t.tpot_s == pytest.approx(tpot)
    assert t.latency_s(500) == pytest.approx(ttft + 499 * tpot)
    text = render_example("serving.latency")
    assert f"| 1 | {ttft * 1e3:.1f} | {tpot * 1e3:.1f} | {1 / tpot:,.0f} |" in text
    cache = 1000 * kv
    moved = render_example("serving.disaggregation")
    assert cache == 500 * MiB and "is 500 MiB" in moved
    assert f"{cache / 50e9 * 1e3:.1f} ms" in moved and f"{2 * cache / 25e9 * 1e3:.1f} ms" in moved


# ---------------------------------------------------------------------------- 237 quantization


def test_qlora_nf4_memory_by_hand():
    assert ptq.qlora_bits_per_weight(double_quant=False) == 4.5
    assert ptq.qlora_bits_per_weight() == 4 + 8 / 64 + 32 / (64 * 256) == 4.126953125
    text = render_example("quantization.qlora")
    assert "| NF4, double-quantized absmax | 4.127 | 3.61 |" in text
    assert f"| 16-bit | 16.000 | {7e9 * 2 / 1e9:.2f} |" in text


def test_gptq_pays_a_rounding_error_back_through_a_correlated_input():
    # two weights whose inputs are the same signal: only their sum matters. Rounding each alone
    # gives 0 + 0 (output error 0.8·x); GPTQ rounds the first to 0, moves its 0.4 onto the
    # second (0.8), which rounds to 1: output error 0.2·x
    x = torch.linspace(-1, 1, 50, dtype=torch.float64).unsqueeze(1).repeat(1, 2)
    w = torch.tensor([0.4, 0.4], dtype=torch.float64)
    assert ptq.round_to_grid(w, 1.0).tolist() == [0.0, 0.0]
    q = ptq.gptq_row(w, x, 1.0)
    assert q.tolist() == [0.0, 1.0]
    assert ptq.output_error(w, q, x) == pytest.approx(0.04 * float((x[:, 0] ** 2).mean()))
    from minigpt.teaching.examples.compression import gptq_example

    w, x, rtn, gptq = gptq_example()
    assert ptq.output_error(w, gptq, x) < ptq.output_error(w, rtn, x) / 10
    text = render_example("quantization.gptq_smoothquant")
    assert f"| GPTQ | {', '.join(f'{v + 0.0:.2f}' for v in gptq.tolist())} |" in text


def test_smoothquant_balances_the_two_maxima():
    s = ptq.smoothquant_scale(60.0, 0.5)
    assert s == pytest.approx(math.sqrt(120))
    assert 60 / s == pytest.approx(0.5 * s)
    text = render_example("quantization.gptq_smoothquant")
    assert f"= {math.sqrt(120):.2f}" in text and f"both reach {60 / math.sqrt(120):.2f}" in text


def test_kv_cache_quantization_by_hand():
    per_token = 2 * 32 * 4096 * 2
    text = render_example("quantization.kv_cache")
    assert f"| 16-bit | 16.00 | 512 KiB | {40 * GiB // per_token:,} |" in text
    four_bit = per_token * (4 + 16 / 64) / 16
    assert four_bit == 136 * 1024
    assert f"| 136 KiB | {int(40 * GiB // four_bit):,} |" in text


# ---------------------------------------------------------------------------- 236 after pre-training


def test_kl_estimators_by_hand():
    policy, reference = [0.6, 0.3, 0.1], [0.5, 0.3, 0.2]
    exact = 0.6 * math.log(0.6 / 0.5) + 0.1 * math.log(0.1 / 0.2)
    assert rl_maths.kl_divergence(policy, reference) == pytest.approx(exact)
    est = rl_maths.kl_estimates(policy, reference)
    k1, k2, k3 = ([e[j] for e in est] for j in range(3))
    assert sum(p * v for p, v in zip(policy, k1)) == pytest.approx(exact)
    assert sum(p * v for p, v in zip(policy, k3)) == pytest.approx(exact)
    k2_mean = 0.6 * math.log(5 / 6) ** 2 / 2 + 0.1 * math.log(2) ** 2 / 2
    assert sum(p * v for p, v in zip(policy, k2)) == pytest.approx(k2_mean)
    assert k1[2] < 0 and min(k3) >= 0
    text = render_example("rl.kl_estimators")
    assert f"| mean under π |  |  | {exact:.4f} | {k2_mean:.4f} | {exact:.4f} |" in text


def test_rl_memory_and_dpo_implicit_reward_by_hand():
    text = render_example("rl.memory")
    assert f"| {7e9 * (16 + 16 + 2 + 2) / 1e9:,.0f} |" in text  # 252: two trained, two frozen
    assert f"| {7e9 * (16 + 2) / 1e9:,.0f} |" in text           # 126
    assert rl_maths.implicit_reward(-20.0, -25.0, 0.1) == pytest.approx(0.5)
    reward = render_example("dpo.implicit_reward")
    assert f"| chosen up 5, rejected unchanged | 0.50 | 0.00 | {1 / (1 + math.exp(-0.5)):.3f} |" in reward


# ---------------------------------------------------------------------------- the lessons


@pytest.mark.parametrize(("lesson_id", "names"), [
    ("parallelism", ["1F1B", "interleaved", "Sequence parallelism", "Context parallelism",
                     "Ring attention", "expert parallelism", "parallel.schedules",
                     "parallel.sequence_expert"]),
    ("quantization-lora-checkpointing", ["QLoRA", "NF4", "Double quantization", "GPTQ", "AWQ",
                                         "SmoothQuant", "Quantizing the KV cache",
                                         "quantization.qlora", "quantization.kv_cache",
                                         "quantization.gptq_smoothquant"]),
    ("speculative-and-beam", ["Self-drafting", "Medusa", "EAGLE", "Multi-token prediction",
                              "(1 − α^(k+1)) / ((1 − α)(c·k + 1))", "speculative.walltime"]),
    ("serving", ["time to first token", "time per output token", "throughput",
                 "Disaggregated serving", "preempts", "swaps", "recomputes", "serving.latency",
                 "serving.disaggregation"]),
    ("after-pretraining", ["k1", "k2", "k3", "implicit reward", "offline", "four networks",
                           "rl.kl_estimators", "rl.memory", "dpo.implicit_reward"]),
], ids=["177", "237", "209", "208", "236"])
def test_the_lesson_teaches_what_was_missing(lesson_id, names):
    text = _lesson(lesson_id)
    missing = [name for name in names if name not in text]
    assert not missing, missing
