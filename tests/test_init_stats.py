"""Initialization statistics measured on a fresh MiniGPT, checked against values worked by hand."""

from __future__ import annotations

import math

import pytest

from minigpt.teaching import init_stats


def test_residual_writers_start_at_002_over_sqrt_2l():
    # L = 4: 0.02 / √8 = 0.00707; the other schemes: 0.02 and 1
    assert init_stats.residual_writer_std(init_stats.build(4, "gpt2")) == pytest.approx(0.02 / math.sqrt(8), rel=0.05)
    assert init_stats.residual_writer_std(init_stats.build(4, "no-scaling")) == pytest.approx(0.02, rel=0.05)
    assert init_stats.residual_writer_std(init_stats.build(4, "std-1")) == pytest.approx(1.0, rel=0.05)


def test_fresh_model_starts_near_a_uniform_guess():
    # small weights → nearly equal logits → loss ≈ ln 27 = 3.296
    assert init_stats.measure(4, "gpt2").initial_loss == pytest.approx(math.log(27), abs=0.1)
    assert init_stats.measure(4, "std-1").initial_loss > 3 * math.log(27)


def test_stream_starts_at_the_embeddings_spread_and_grows_without_scaling():
    gpt2 = init_stats.measure(12, "gpt2", batch=8)
    plain = init_stats.measure(12, "no-scaling", batch=8)
    # token + position embeddings, each std 0.02: √2 · 0.02 = 0.028 before the first block
    assert gpt2.stream_std[0] == pytest.approx(math.sqrt(2) * 0.02, rel=0.15)
    assert gpt2.stream_std[-1] < 1.5 * gpt2.stream_std[0]
    assert plain.stream_std[-1] > 2.5 * plain.stream_std[0]
    spread = {s.scheme: max(s.grad_std) / min(s.grad_std)
              for s in (gpt2, plain, init_stats.measure(12, "std-1", batch=8))}
    assert spread["gpt2"] < spread["no-scaling"] < spread["std-1"]


def test_unknown_scheme():
    with pytest.raises(ValueError, match="unknown scheme"):
        init_stats.build(2, "xavier")
