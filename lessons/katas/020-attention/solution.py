import math

import torch


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q kᵀ / √d) v over the last two axes."""
    d = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)
    if causal:
        t_q, t_k = scores.shape[-2], scores.shape[-1]
        future = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    weights = scores - scores.amax(dim=-1, keepdim=True)
    weights = weights.exp()
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ v
