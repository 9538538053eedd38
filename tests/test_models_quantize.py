"""Quantization round trips: error bounds, ranges, bytes counted by hand, refusals."""

from __future__ import annotations

import pytest
import torch

from minigpt.errors import ConfigError
from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.models.quantize import (
    QuantConfig,
    dequantize,
    quantize,
    quantize_model,
    scale_of_each_weight,
)

SETTINGS = [QuantConfig(b, g, 16) for b in (8, 4) for g in ("tensor", "channel", "group")]


def _weights() -> torch.Tensor:
    torch.manual_seed(0)
    w = torch.randn(24, 64) * 0.05
    w[3, 7] = 2.5  # an outlier
    return w


@pytest.mark.parametrize("cfg", SETTINGS, ids=lambda c: c.label)
def test_every_weight_comes_back_within_half_a_step(cfg):
    w = _weights()
    qt = quantize(w, cfg)
    back = dequantize(qt)
    assert back.shape == w.shape and qt.q.dtype == torch.int8
    assert int(qt.q.abs().max()) <= cfg.q_max
    bound = scale_of_each_weight(qt) / 2
    assert bool(((w - back).abs() <= bound * (1 + 1e-6)).all())
    # the largest |w| of each block is a whole number of steps: it comes back (almost) exactly
    assert (back.abs().max() - w.abs().max()).abs() < 1e-6


def test_finer_scales_lose_less_on_a_matrix_with_an_outlier():
    w = _weights()
    errors = {g: (dequantize(quantize(w, QuantConfig(4, g, 16))) - w).abs()[torch.arange(24) != 3].max().item()
              for g in ("tensor", "channel", "group")}
    assert errors["tensor"] > 5 * errors["channel"]
    assert errors["group"] <= errors["channel"]


def test_the_worked_outlier_example_by_hand():
    w = torch.tensor([[0.1, -0.3, 0.25, 4.0], [0.2, -0.16, 0.05, 0.3]])
    per_tensor = quantize(w, QuantConfig(4, "tensor"))
    assert per_tensor.scale.item() == pytest.approx(4 / 7)
    assert per_tensor.q.flatten().tolist() == [0, -1, 0, 7, 0, 0, 0, 1]  # 0.3 / 0.571 = 0.525 → 1
    per_row = quantize(w, QuantConfig(4, "channel"))
    assert per_row.q[1].flatten().tolist() == [5, -4, 1, 7]  # 0.2/0.0429 = 4.67, -3.73, 1.17, 7
    assert dequantize(per_row)[1].tolist() == pytest.approx([5 * 0.3 / 7, -4 * 0.3 / 7, 0.3 / 7, 0.3])


def test_an_all_zero_matrix_round_trips_exactly():
    w = torch.zeros(4, 8)
    assert torch.equal(dequantize(quantize(w, QuantConfig(4, "tensor"))), w)


def test_bytes_are_bits_per_weight_plus_four_per_scale():
    w = torch.randn(64, 64)
    assert quantize(w, QuantConfig(4, "tensor")).n_bytes == 64 * 64 // 2 + 4
    assert quantize(w, QuantConfig(8, "channel")).n_bytes == 64 * 64 + 64 * 4
    assert quantize(w, QuantConfig(4, "group", 32)).n_bytes == 64 * 64 // 2 + 64 * 2 * 4
    assert quantize(torch.randn(3, 3), QuantConfig(4, "tensor")).n_bytes == 5 + 4  # 9 nibbles → 5 bytes


def test_a_whole_model_counted_by_hand():
    cfg = GPTConfig(vocab_size=5, block_size=4, d_model=8, n_heads=2, n_layers=1)
    model = MiniGPT(cfg)
    out, counted = quantize_model(model, QuantConfig(8, "channel"))
    n_params = sum(p.numel() for p in model.parameters())
    # matrices: tok 5×8, pos 4×8, qkv 24×8, proj 8×8, up 32×8, down 8×32, head 5×8
    rows = 5 + 4 + 24 + 8 + 32 + 8 + 5
    matrix_weights = 40 + 32 + 192 + 64 + 256 + 256 + 40  # 880
    assert counted.float_bytes == 4 * n_params
    assert counted.n_quantized == matrix_weights
    assert counted.quant_bytes == matrix_weights + 4 * rows + 4 * (n_params - matrix_weights)
    assert out is not model and not torch.equal(out.head.weight, model.head.weight)
    x = torch.randint(0, 5, (2, 4))
    assert (out(x)[0] - model(x)[0]).abs().max() < 0.05  # int8 per row: a small change


def test_tied_weights_count_once():
    model = MiniGPT(GPTConfig(vocab_size=5, block_size=4, d_model=8, n_heads=2, n_layers=1, tie_weights=True))
    _, counted = quantize_model(model, QuantConfig(8, "tensor"))
    assert counted.float_bytes == 4 * sum(p.numel() for p in model.parameters())


def test_bad_settings_are_refused_with_a_reason():
    with pytest.raises(ConfigError, match="bits"):
        QuantConfig(3)
    with pytest.raises(ConfigError, match="granularity"):
        QuantConfig(8, "row")
    with pytest.raises(ConfigError, match="groups of 5"):
        quantize(torch.randn(4, 8), QuantConfig(4, "group", 5))
    with pytest.raises(ConfigError, match="2-D"):
        quantize(torch.randn(8), QuantConfig(8))
