"""Positions past the training length: learned tables, RoPE with interpolation or NTK scaling,
and ALiBi's distance penalties, each computed on small examples.

RoPE turns pair i of a head (i = 0 … head_dim/2 − 1) by the angle ``position · θ_i`` with
θ_i = base^(−2i/head_dim). A model trained on positions below L has only seen angles below
L·θ_i. Two ways to reach a longer context s·L:

- **position interpolation** divides every position by s, so the angles stay in the trained
  range (the last position, (s·L − 1)/s, is under one step past L − 1), at the price of finer
  steps between neighbours, and is followed by a short fine-tune;
- **NTK-aware scaling** raises the base to base·s^(d/(d−2)) (d = head_dim): the fastest pair
  (i = 0) is untouched, the slowest pair is slowed by exactly s, pairs in between by less.

ALiBi adds no position to the tokens at all: head h subtracts slope_h · (i − j) from the score of
query i on key j, with slopes 2^(−8/n), 2^(−16/n), … for n heads (a power of two).
"""

from __future__ import annotations

import torch


def rope_frequencies(head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """θ_i = base^(−2i/head_dim), one per pair of dimensions (float64)."""
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim must be even and at least 2, got {head_dim}")
    return base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)


def rope_angles(position: float, head_dim: int, base: float = 10000.0,
                interpolation: float = 1.0) -> torch.Tensor:
    """The angle (radians) of each pair at ``position``; ``interpolation`` s divides the position."""
    return (position / interpolation) * rope_frequencies(head_dim, base)


def ntk_base(base: float, scale: float, head_dim: int) -> float:
    """The RoPE base that stretches the slowest pair by ``scale`` and leaves the fastest alone."""
    return base * scale ** (head_dim / (head_dim - 2))


def alibi_slopes(n_heads: int) -> list[float]:
    """Slopes 2^(−8k/n) for k = 1…n (n a power of two, as in the ALiBi paper)."""
    if n_heads < 1 or n_heads & (n_heads - 1):
        raise ValueError(f"n_heads must be a power of two, got {n_heads}")
    return [2.0 ** (-8.0 * k / n_heads) for k in range(1, n_heads + 1)]


def alibi_bias(T: int, slope: float) -> torch.Tensor:
    """T×T bias added to the scores: −slope·(i − j) on and below the diagonal, −∞ above."""
    i = torch.arange(T, dtype=torch.float64)[:, None]
    j = torch.arange(T, dtype=torch.float64)[None, :]
    bias = -slope * (i - j)
    return bias.masked_fill(j > i, float("-inf"))
