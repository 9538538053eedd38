"""The modded-nanogpt speedrun's model tricks, each an option of GPTConfig (all off by default).

The speedrun (Keller Jordan and others, 2024–25) trains GPT-2-small on FineWeb as fast as it can
and keeps a trick only when it shortens the record. The ones here are sized for a 27-character
vocabulary; ``MiniGPT`` wires them in, and docs/benchmarks.md has what each did on names:

- an exact bigram table: with 27 characters there are only 27·28 (previous, current) pairs, so
  the speedrun's hashed bigram embedding becomes a plain table, no hash collisions. Added to the
  residual stream before every block (each block with its own learned weight λ), or, in its
  simplest form, a 27×27 table of next-character logits read by the current character;
- "smear": each position adds a gated share of the previous position's embedding, so the first
  layer already sees two characters without spending attention on it;
- multi-token prediction: an extra head predicts the character after next from the same final
  state, an auxiliary loss that asks the state to plan one step further.

The others are a few lines where they act (``minigpt.models.gpt``): value residual, the x0
shortcut, logit soft-capping, zero-initialised output projections.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from minigpt.data import IGNORE


class KVCache(list):
    """One [k, v] pair per layer, plus what the previous-character tricks need at the next step:
    the last token of each row and its embedding (before smear)."""

    prev_token: torch.Tensor | None = None  # (B, 1)
    prev_emb: torch.Tensor | None = None  # (B, 1, d)


def has_previous(positions: torch.Tensor) -> torch.Tensor:
    """True where a token has a previous character in its own word or window (position > 0)."""
    return positions > 0


def previous_tokens(idx: torch.Tensor, positions: torch.Tensor, cache: KVCache | None, none: int) -> torch.Tensor:
    """(B, T) the character before each position, ``none`` where there is none (a word's start:
    packed words never see the word before them). With a cache the first one comes from it."""
    first = cache.prev_token if cache is not None and cache.prev_token is not None else torch.full_like(idx[:, :1], none)
    prev = torch.cat((first, idx[:, :-1]), dim=1)
    return torch.where(has_previous(positions).expand_as(prev), prev, torch.full_like(prev, none))


class BigramTable(nn.Module):
    """An exact table of (previous, current) character pairs → a d-vector for the residual stream.

    Row ``prev · V + cur``; the extra "previous" value V marks a word's first position. Starts at
    zero, so the model begins as it would without it and learns only what the pairs add.
    """

    def __init__(self, vocab_size: int, d_model: int):
        super().__init__()
        self.vocab_size = vocab_size
        self.table = nn.Embedding((vocab_size + 1) * vocab_size, d_model)
        nn.init.zeros_(self.table.weight)

    def forward(self, idx: torch.Tensor, prev: torch.Tensor) -> torch.Tensor:
        return self.table(prev * self.vocab_size + idx)


class Smear(nn.Module):
    """x_t += λ · σ(w·x_t) · x_{t-1}: a gate (read from the current position) letting in the previous
    position's embedding. λ starts at 0, so the model begins as it would without it."""

    def __init__(self, d_model: int):
        super().__init__()
        self.gate = nn.Linear(d_model, 1, bias=False)
        self.weight = nn.Parameter(torch.zeros(()))  # λ

    def forward(self, x: torch.Tensor, positions: torch.Tensor, cache: KVCache | None) -> torch.Tensor:
        first = cache.prev_emb if cache is not None and cache.prev_emb is not None else torch.zeros_like(x[:, :1])
        prev = torch.cat((first, x[:, :-1]), dim=1)
        keep = has_previous(positions).to(x.dtype)
        keep = keep[..., None] if keep.dim() == 2 else keep[None, :, None]
        return x + self.weight * torch.sigmoid(self.gate(x)) * prev * keep


def remember_last(cache: KVCache | None, idx: torch.Tensor, emb: torch.Tensor) -> None:
    """Keep each row's last token and embedding for the next cached step."""
    if cache is not None:
        cache.prev_token, cache.prev_emb = idx[:, -1:], emb[:, -1:]


def softcap(logits: torch.Tensor, cap: float | None) -> torch.Tensor:
    """cap · tanh(logits / cap): about the identity for small logits, never past ±cap, so no logit
    can run away (the speedrun's 30, later 15)."""
    return logits if cap is None else cap * torch.tanh(logits / cap)


def after_next_targets(targets: torch.Tensor, segments: torch.Tensor | None) -> torch.Tensor:
    """The character after next for each position (multi-token prediction's second target):
    the next target one position on, padding where that lies in another packed word or past the row."""
    out = torch.full_like(targets, IGNORE)
    shifted = targets[:, 1:]
    if segments is not None:
        same_word = segments[:, 1:] == segments[:, :-1]
        shifted = torch.where(same_word, shifted, torch.full_like(shifted, IGNORE))
    out[:, :-1] = shifted
    return out


def after_next_loss(logits: torch.Tensor, targets: torch.Tensor, segments: torch.Tensor | None) -> torch.Tensor:
    """Mean cross-entropy of the second head against the characters after next (0 when none)."""
    y2 = after_next_targets(targets, segments)
    if not (y2 != IGNORE).any():
        return logits.sum() * 0.0
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)).float(), y2.reshape(-1), ignore_index=IGNORE)
