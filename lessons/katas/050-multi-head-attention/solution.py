import math

import torch


def multi_head_attention(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor,
                         w_o: torch.Tensor, n_head: int) -> torch.Tensor:
    """Causal multi-head self-attention of x (B, T, d)."""
    batch, time, width = x.shape
    per_head = width // n_head

    def heads(t: torch.Tensor) -> torch.Tensor:  # (B, T, d) -> (B, H, T, d/H)
        return t.reshape(batch, time, n_head, per_head).transpose(1, 2)

    q, k, v = heads(x @ w_q), heads(x @ w_k), heads(x @ w_v)
    scores = q @ k.transpose(-2, -1) / math.sqrt(per_head)
    future = torch.ones(time, time, dtype=torch.bool, device=x.device).triu(1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    mixed = (weights @ v).transpose(1, 2).reshape(batch, time, width)
    return mixed @ w_o
