"""GPTQ (Frantar et al. 2023): a linear layer's weights rounded column by column, each column's
rounding error paid back by the columns not yet rounded, so that the layer's output on
calibration inputs moves as little as possible; and round-to-nearest with the same grid.

The layer computes y = x·Wᵀ. Its squared output error for a change ΔW is Σ ΔW H ΔWᵀ / 2 with
H = 2·XᵀX / n over the calibration inputs X (n × in): the Hessian of that error. GPTQ walks the
input columns in order; after rounding column i it spreads the error over columns i+1… through
row i of the inverse Hessian's upper Cholesky factor, which is what the optimal brain surgeon's
update becomes when the columns are taken in a fixed order. A damping of 1% of H's mean diagonal
keeps the inverse stable; an input that never fires (zero diagonal) has its column set to 0.

Both methods use the grid of minigpt.models.quantize: symmetric integers ±(2^(b−1) − 1) with a float32 scale
per group of consecutive input columns of a row, set from the group's absolute maximum. GPTQ sets
a group's scale when it reaches the group, from the weights as already corrected.
"""

from __future__ import annotations

import torch

DAMPING = 0.01  # of H's mean diagonal, as the GPTQ paper's code


def hessian(x: torch.Tensor) -> torch.Tensor:
    """H = 2·XᵀX / n for calibration inputs x (…, in), in float64."""
    flat = x.detach().reshape(-1, x.shape[-1]).double()
    return 2 * flat.T @ flat / max(flat.shape[0], 1)


def _group_scale(w: torch.Tensor, q_max: int) -> torch.Tensor:
    largest = w.abs().amax(dim=1, keepdim=True)
    return torch.where(largest > 0, largest / q_max, torch.ones_like(largest))


def round_to_nearest(w: torch.Tensor, bits: int, group: int) -> torch.Tensor:
    """Every weight rounded on its own, one absmax scale per ``group`` columns of a row."""
    q_max = 2 ** (bits - 1) - 1
    out = torch.empty_like(w, dtype=torch.float64)
    for start in range(0, w.shape[1], group):
        block = w[:, start:start + group].double()
        scale = _group_scale(block, q_max)
        out[:, start:start + group] = torch.round(block / scale).clamp(-q_max, q_max) * scale
    return out.to(w.dtype)


def gptq(w: torch.Tensor, h: torch.Tensor, bits: int, group: int, damping: float = DAMPING) -> torch.Tensor:
    """The dequantized weights GPTQ picks for w (out × in) given the Hessian h (in × in)."""
    q_max = 2 ** (bits - 1) - 1
    w, h = w.detach().double().clone(), h.double().clone()
    dead = h.diagonal() == 0
    h[dead, dead] = 1.0
    w[:, dead] = 0.0
    h += damping * h.diagonal().mean() * torch.eye(h.shape[0], dtype=h.dtype)
    # Upper Cholesky factor of H⁻¹: its row i holds column i's update with columns < i removed.
    h_inv = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)), upper=True)
    q = torch.zeros_like(w)
    scale = None
    for i in range(w.shape[1]):
        if i % group == 0:
            scale = _group_scale(w[:, i:i + group], q_max)[:, 0]
        q[:, i] = torch.round(w[:, i] / scale).clamp(-q_max, q_max) * scale
        error = (w[:, i] - q[:, i]) / h_inv[i, i]
        w[:, i + 1:] -= torch.outer(error, h_inv[i, i + 1:])
    return q.float()


def output_error(w: torch.Tensor, q: torch.Tensor, x: torch.Tensor) -> float:
    """Mean squared change of the layer's output x·Wᵀ over the inputs x when W becomes q."""
    flat = x.detach().reshape(-1, x.shape[-1]).double()
    return float(((flat @ (w.double() - q.double()).T) ** 2).mean())
