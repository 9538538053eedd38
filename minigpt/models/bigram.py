"""The bigram baseline: count how often each character follows each other, add-k smoothing.

There is nothing to learn by gradient: ``fit`` counts pairs over the training words once. The
table is kept as a buffer so it saves and loads with the other models' weights.
"""

from __future__ import annotations

import torch
from torch import nn

from minigpt.data import IGNORE
from minigpt.models.config import BigramConfig
from minigpt.models.loss import next_token_loss


class Bigram(nn.Module):
    kind = "bigram"

    def __init__(self, cfg: BigramConfig):
        super().__init__()
        self.config = cfg
        self.register_buffer("counts", torch.zeros(cfg.vocab_size, cfg.vocab_size))

    @torch.no_grad()
    def fit(self, x: torch.Tensor, y: torch.Tensor) -> None:
        """Count (input char → next char) over padded input/target tensors."""
        keep = y != IGNORE
        pairs = x[keep] * self.config.vocab_size + y[keep]
        V = self.config.vocab_size
        self.counts.copy_(torch.bincount(pairs, minlength=V * V).view(V, V).float())

    @property
    def log_probs(self) -> torch.Tensor:
        smoothed = self.counts + self.config.smoothing
        return torch.log(smoothed / smoothed.sum(dim=1, keepdim=True))

    def forward(self, idx, targets=None, *, last_only: bool = False, **_):
        if last_only:
            idx = idx[:, -1:]
        logits = self.log_probs[idx]  # log-probabilities are valid logits
        loss = next_token_loss(logits, targets)
        return logits, loss
