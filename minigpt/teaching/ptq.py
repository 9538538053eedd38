"""Quantization beyond round-to-nearest, on small numbers: QLoRA's storage cost, GPTQ's error
feedback, SmoothQuant's scale migration, and the bits a quantized KV cache takes.

- QLoRA (Dettmers et al. 2023) stores the frozen base model in NF4, 4 bits per weight with one
  absolute maximum per block of 64; double quantization stores those maxima in 8 bits with one
  float32 constant per 256 of them, and trains LoRA adapters in 16 bits on top.
- GPTQ (Frantar et al. 2022) rounds a row's weights one at a time and spreads each rounding error
  over the weights not yet rounded, in proportion to how the layer's inputs correlate
  (the inverse of H = XᵀX), so the layer's *output* moves less than under plain rounding.
- SmoothQuant (Xiao et al. 2022) divides an input channel's activations by s and multiplies the
  matching weights by s, s = max|X_j|^α / max|W_j|^(1−α): the product is unchanged, and an
  activation outlier becomes small enough for int8. AWQ (Lin et al. 2023) scales the weights of
  the channels with large activations up before rounding, for the same reason.
"""

from __future__ import annotations

import torch

NF4_BLOCK = 64          # weights per absmax in QLoRA
SECOND_BLOCK = 256      # absmaxes per float32 constant under double quantization


def qlora_bits_per_weight(double_quant: bool = True, block: int = NF4_BLOCK,
                          second_block: int = SECOND_BLOCK) -> float:
    """Storage bits per base weight: 4, plus the block's absmax shared by ``block`` weights —
    32/64 = 0.5 bits as float32, or 8/64 + 32/(64·256) ≈ 0.127 bits double-quantized."""
    if double_quant:
        return 4 + 8 / block + 32 / (block * second_block)
    return 4 + 32 / block


def round_to_grid(w: torch.Tensor, step: float) -> torch.Tensor:
    return torch.round(w / step) * step


def gptq_row(w: torch.Tensor, x: torch.Tensor, step: float, damp: float = 1e-6) -> torch.Tensor:
    """One weight row rounded GPTQ-style to a grid of ``step``: column by column, each rounding
    error is passed on to the columns still unrounded through the inverse Hessian of the layer's
    squared output error, H = XᵀX (x: samples × inputs)."""
    h = x.T @ x
    h = h + damp * torch.eye(h.shape[0], dtype=h.dtype) * h.diagonal().mean()
    h_inv = torch.linalg.inv(h)
    w, q = w.clone(), torch.zeros_like(w)
    for i in range(w.numel()):
        q[i] = round_to_grid(w[i], step)
        error = (w[i] - q[i]) / h_inv[i, i]
        w[i + 1:] -= error * h_inv[i, i + 1:]
        # drop input i from the inverse Hessian (one step of Gaussian elimination)
        h_inv = h_inv - torch.outer(h_inv[:, i], h_inv[i, :]) / h_inv[i, i]
    return q


def output_error(w: torch.Tensor, q: torch.Tensor, x: torch.Tensor) -> float:
    """Mean squared change of the layer's output x·w when w is replaced by q."""
    return float(((x @ (w - q)) ** 2).mean())


def smoothquant_scale(act_max: float, weight_max: float, alpha: float = 0.5) -> float:
    """SmoothQuant's per-channel factor s = max|X_j|^α / max|W_j|^(1−α)."""
    return act_max ** alpha / weight_max ** (1 - alpha)


def kv_bits_per_value(bits: int, group: int | None = None, scale_bits: int = 16) -> float:
    """Bits per cached key or value: ``bits``, plus a 16-bit scale shared by ``group`` values
    when the cache is quantized (None: no scale, as for 16-bit values)."""
    return bits + (scale_bits / group if group else 0.0)
