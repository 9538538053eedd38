"""The one loss every model uses: mean cross-entropy over the real (non-padding) positions."""

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
