"""A fixed-size state against a growing cache: what one generated token costs in attention, in
linear attention and in a diagonal state-space recurrence, per layer, leaving out the projections
all three share.

- Attention at position t scores t keys and mixes t values: 4·t·d FLOPs, and its cache holds
  2·t·d numbers (K and V for every position).
- Linear attention (Katharopoulos et al. 2020) replaces softmax(q·kᵀ) by φ(q)·φ(k)ᵀ, so the sum
  over the past becomes a running d_h × d_h state per head, S ← S + φ(k)·vᵀ, read out as φ(q)·S:
  2·d_h² FLOPs to update and 2·d_h² to read, per head: 4·d·d_h per layer, d·d_h numbers of state.
- A diagonal state-space layer (S4: Gu et al. 2022; Mamba: Gu and Dao 2023) keeps n numbers of
  state for each of its E·d channels, h ← a ⊙ h + b·x, y = Σ c ⊙ h: 5 FLOPs per state number
  (two multiplies and an add to update, a multiply and an add to read out), E·d·n numbers of
  state. Mamba uses E = 2 and n = 16; its a, b, c depend on the input ("selective"), which
  changes nothing in the count.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class TokenCost:
    name: str
    flops: int    # per generated token, per layer
    state: int    # numbers kept per sequence, per layer


def attention_cost(t: int, d: int) -> TokenCost:
    return TokenCost("attention", 4 * t * d, 2 * t * d)


def linear_attention_cost(d: int, head_dim: int) -> TokenCost:
    return TokenCost("linear attention", 4 * d * head_dim, d * head_dim)


def ssm_cost(d: int, expand: int = 2, state: int = 16) -> TokenCost:
    return TokenCost("state space (Mamba-like)", 5 * expand * d * state, expand * d * state)


def break_even_position(head_dim: int) -> int:
    """Where attention's per-token FLOPs 4·t·d reach linear attention's 4·d·d_h: t = d_h."""
    return head_dim


# --- the same outputs two ways -----------------------------------------------------------------


def feature_map(x: torch.Tensor) -> torch.Tensor:
    """φ(x) = elu(x) + 1: positive, as Katharopoulos et al. use."""
    return torch.nn.functional.elu(x) + 1


def linear_attention_parallel(q, k, v):
    """All positions at once, as in training: causal weights φ(q)·φ(k)ᵀ, normalised by row."""
    w = torch.tril(feature_map(q) @ feature_map(k).T)
    return (w @ v) / w.sum(-1, keepdim=True)


def linear_attention_recurrent(q, k, v):
    """One position at a time, as in generation: a d × d state and a d-long normaliser."""
    state = torch.zeros(k.shape[1], v.shape[1], dtype=v.dtype)
    norm = torch.zeros(k.shape[1], dtype=v.dtype)
    out = []
    for t in range(q.shape[0]):
        fk = feature_map(k[t])
        state = state + torch.outer(fk, v[t])
        norm = norm + fk
        fq = feature_map(q[t])
        out.append(fq @ state / (fq @ norm))
    return torch.stack(out)
