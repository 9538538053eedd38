"""The course's Day 2 model: embed the last few characters, one tanh hidden layer, logits.

It reads the same whole-word sequences as MiniGPT: for each position it looks back ``context``
characters (the start token fills in before the word begins), so the three models share one
interface and one loss.
"""

from __future__ import annotations

import torch
from torch import nn

from minigpt.models.config import MLPConfig
from minigpt.models.loss import next_token_loss


class MLP(nn.Module):
    kind = "mlp"

    def __init__(self, cfg: MLPConfig):
        super().__init__()
        self.config = cfg
        self.emb = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.hidden = nn.Linear(cfg.context * cfg.n_embd, cfg.n_hidden)
        self.out = nn.Linear(cfg.n_hidden, cfg.vocab_size)
        # Small output weights: the first loss is close to -ln(1/V) instead of a confident mistake.
        with torch.no_grad():
            self.out.weight.mul_(0.1)
            self.out.bias.zero_()

    def windows(self, idx: torch.Tensor) -> torch.Tensor:
        """(B, T) → (B, T, context): position t sees tokens t-context+1 … t (start-padded)."""
        pad = torch.zeros(idx.shape[0], self.config.context - 1, dtype=idx.dtype, device=idx.device)
        return torch.cat((pad, idx), dim=1).unfold(1, self.config.context, 1)

    def forward(self, idx, targets=None, *, last_only: bool = False, **_):
        if last_only:
            idx = idx[:, -self.config.context :]
        w = self.windows(idx)
        if last_only:
            w = w[:, -1:]
        B, T, _ = w.shape
        h = torch.tanh(self.hidden(self.emb(w).view(B, T, -1)))
        logits = self.out(h)
        loss = next_token_loss(logits, targets)
        return logits, loss
