"""Position encodings for teaching: the sinusoidal table and RoPE's rotation, in float64."""

from __future__ import annotations

import torch

Tensor = torch.Tensor


def _t(x) -> Tensor:
    return torch.as_tensor(x, dtype=torch.float64)


def sinusoidal_pe(T: int, d: int, base: float = 10000.0) -> Tensor:
    """PE[pos, 2i] = sin(pos / base^(2i/d)), PE[pos, 2i+1] = cos(same angle)."""
    if d % 2:
        raise ValueError(f"sinusoidal encoding needs an even dimension, got d={d}")
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    i = torch.arange(0, d, 2, dtype=torch.float64)[None, :]
    angle = pos / base ** (i / d)
    pe = torch.zeros(T, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe


def rope_rotate(x, pos: int, base: float = 10000.0) -> Tensor:
    """Rotate consecutive pairs (x0,x1), (x2,x3)… of a vector by pos·θ_i, θ_i = base^(-2i/d)."""
    x = _t(x)
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"RoPE needs an even dimension, got d={d}")
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = pos * theta
    c, s = torch.cos(ang), torch.sin(ang)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = x0 * c - x1 * s
    out[..., 1::2] = x0 * s + x1 * c
    return out


def rope_identity(q, k, m: int, n: int) -> tuple[float, float]:
    """Both sides of ⟨R_m q, R_n k⟩ = ⟨q, R_(n−m) k⟩: the score depends only on n − m."""
    lhs = torch.dot(rope_rotate(q, m), rope_rotate(k, n)).item()
    rhs = torch.dot(_t(q), rope_rotate(k, n - m)).item()
    return lhs, rhs
