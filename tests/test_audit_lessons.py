"""Lesson text and worked examples fixed by the round-4 content audit, each pinned against an
independent computation (a count by hand from a config, torch, a probability worked out here) or
the paper's own statement."""

from __future__ import annotations

import math
import re

import torch

from minigpt.lessons import load_lessons
from minigpt.teaching import params, rl_maths, state_space
from minigpt.teaching.examples import catalog  # noqa: F401 (registers every example)
from minigpt.teaching.examples.registry import render_example


def _lesson(lesson_id: str) -> str:
    """A lesson's body with line breaks folded, so phrases can be found across lines."""
    body = next(lesson.body for lesson in load_lessons() if lesson.id == lesson_id)
    return " ".join(body.split())


def _rows(markdown: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip("|").split("|")] for line in markdown.splitlines()
            if line.startswith("|") and not line.startswith("|---")]


# ---------------------------------------------------------------------------- 207 inference cost


def test_gpt2_flops_per_token_counts_the_tied_head():
    cfg = params.GPT2_SMALL
    d, L, V, T = cfg.d_model, cfg.n_layers, cfg.vocab_size, cfg.block_size
    # by hand: per block 12·d² + 13·d, the final LayerNorm 2·d, the tied head V·d (a matmul)
    n = L * (12 * d * d + 13 * d) + 2 * d + V * d
    assert 2 * n == 247_306_752
    attention = 4 * L * T * d
    share = attention / (2 * n + attention)
    assert round(share, 2) == 0.13
    text = render_example("inference.flops_per_token")
    row = next(r for r in _rows(text) if r[0] == "GPT-2 small")
    assert row[1] == f"{n:,}" and row[4] == f"{share:.0%}" == "13%"
    assert f"{2 * d * V / 1e6:.1f} MFLOP" in text  # 77.2, the head the old row left out


def test_kaplans_attention_term_is_presented_as_an_interpretation():
    text = _lesson("inference-cost")
    assert "because it averages over a causal context" not in text
    assert "one way to read the halving" in text


# ---------------------------------------------------------------------------- 190 sampling


def test_min_p_caption_names_every_row_where_it_keeps_more_than_top_p():
    text = render_example("decoding.min_p")
    more = [r for r in _rows(text)[1:] if int(r[4]) > int(r[5])]
    assert more  # the shipped model's "mar" at T = 2
    for context, temperature, *_, by_min_p, by_top_p in more:
        assert f"after “{context}” at T = {temperature} ({by_min_p} against {by_top_p})" in text
    lesson = _lesson("sampling")
    assert "does not drag more candidates in" not in lesson
    assert "can keep more candidates than top-p" in lesson


def test_the_negative_logit_rule_is_credited_to_later_implementations():
    text = _lesson("sampling")
    assert "CTRL paper states only the division" in text


# ---------------------------------------------------------------------------- 236 after pre-training


def test_ppo_clip_is_relative_to_the_old_probability():
    # a token at 0.01 moved to 0.0121: 0.0021 in probability, far below ε = 0.2, yet clipped
    _, grad = rl_maths.ppo_clipped(0.0121 / 0.01, advantage=1.0)
    assert grad == 0.0
    text = _lesson("after-pretraining")
    assert "moved more than ε" not in text
    assert "factor 1 ± ε" in text and "a token at 0.01 stops at 0.012" in text


def test_grpo_puts_its_kl_term_in_the_loss_and_leaves_the_divisor_open():
    text = _lesson("after-pretraining")
    assert "stay as in PPO" not in text
    assert "straight into the loss" in text and "averaged over its length" in text
    rewards = torch.tensor([1.0, 0, 0, 0, 1, 0], dtype=torch.float64)
    sample_std = (rewards - rewards.mean()) / rewards.std()  # divisor n − 1
    example = render_example("rl.grpo")
    assert f"{sample_std[0]:.3f} and {sample_std[1]:.3f}" in example


# ---------------------------------------------------------------------------- 210 flash attention


def test_linear_attention_readout_needs_its_normaliser():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(6, 4, generator=g, dtype=torch.float64) for _ in range(3))
    parallel = state_space.linear_attention_parallel(q, k, v)
    assert torch.allclose(state_space.linear_attention_recurrent(q, k, v), parallel)
    fk = state_space.feature_map(k)
    state = torch.einsum("td,te->de", fk, v)  # S after all six tokens
    bare = state_space.feature_map(q[-1]) @ state      # φ(q)·S without dividing by φ(q)·z
    assert not torch.allclose(bare, parallel[-1])
    assert torch.allclose(bare / (state_space.feature_map(q[-1]) @ fk.sum(0)), parallel[-1])
    assert "φ(q)·S / (φ(q)·z)" in _lesson("flash-attention")


def test_flashattention_one_saves_m_and_l_per_row():
    text = _lesson("flash-attention")
    assert "one number per row, the log-sum-exp" not in text
    assert "largest score m and its sum of exponentials ℓ" in text and "FlashAttention-2" in text


# ---------------------------------------------------------------------------- 150, 215, 237, 209


def test_softmax_bottleneck_lesson_gives_d_plus_one_and_drops_adaptive_softmax():
    g = torch.Generator().manual_seed(2)
    d = 3
    logits = torch.randn(20, d, generator=g, dtype=torch.float64) @ torch.randn(
        d, 12, generator=g, dtype=torch.float64)
    assert torch.linalg.matrix_rank(torch.log_softmax(logits, -1)) == d + 1
    text = _lesson("mini-gpt")
    assert "at most d + 1" in text and "An adaptive softmax is not one" in text


def _chance_of_a_repeat(chunk: int, letters: int = 26) -> float:
    return 1 - math.prod((letters - i) / letters for i in range(chunk))


def test_induction_data_admits_repeated_letters():
    assert _chance_of_a_repeat(10) > 0.5 and _chance_of_a_repeat(16) > 0.98
    assert _chance_of_a_repeat(4) < 0.25
    text = _lesson("induction-heads")
    assert "the second copy on, everything can:" not in text
    assert "most chunks of ten letters or more hold some letter twice" in text
    from minigpt import repeat_data

    assert "second copy on, every letter can:" not in " ".join(repeat_data.__doc__.split())


def test_the_quantization_experiment_is_fake_quantization():
    from minigpt.models.gpt import MiniGPT
    from minigpt.models.quantize import QuantConfig, quantize_model
    from minigpt.teaching.shipped import shipped_config

    model = MiniGPT(shipped_config())
    quantized, _ = quantize_model(model, QuantConfig(4, "group", 16))
    assert all(p.dtype == torch.float32 for p in quantized.parameters())  # nothing stored small
    text = _lesson("quantization-lora-checkpointing")
    assert "Only storage and memory traffic shrink in this experiment" not in text
    assert "fake quantization" in text and "nothing in memory shrinks" in text
    assert "32 to 128" in text


def test_the_length_penalty_exponent_is_not_the_acceptance_rate():
    text = _lesson("speculative-and-beam")
    assert "n^α" not in text and "log p / n^β" in text and "((5 + n)/6)^β" in text
    assert "n^α" not in render_example("beam.length_penalty")
    assert re.search(r"α = Σ min\(p, q\)", text)
