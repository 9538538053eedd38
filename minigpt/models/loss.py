"""The one loss every model uses: mean cross-entropy over the real (non-padding) positions; and
PaLM's z-loss, the MiniGPT's optional stabiliser."""

from __future__ import annotations

from torch import Tensor
from torch.nn import functional as F

from minigpt.data import IGNORE


def next_token_loss(logits: Tensor, targets: Tensor | None) -> Tensor | None:
    """None without targets; padding targets (IGNORE) add nothing to the mean."""
    if targets is None:
        return None
    flat = logits.reshape(-1, logits.size(-1)).float()
    return F.cross_entropy(flat, targets.reshape(-1), ignore_index=IGNORE)


def z_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean (log Z)² over the real positions, Z = Σ exp(logit) the softmax's normaliser (PaLM,
    Chowdhery et al. 2022; scaled by its coefficient, e.g. 1e-4, by the caller). The softmax
    cannot see a shift of all logits; this term can, and keeps log Z near 0."""
    log_z = logits.float().logsumexp(dim=-1)
    real = (targets != IGNORE).to(log_z.dtype)
    return (log_z.square() * real).sum() / real.sum().clamp(min=1.0)
