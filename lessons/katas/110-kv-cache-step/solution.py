import math

import torch


def kv_cache_step(q_new: torch.Tensor, k_new: torch.Tensor, v_new: torch.Tensor,
                  cache_k: torch.Tensor, cache_v: torch.Tensor):
    """Attention for one new token over the cached keys and values and its own."""
    keys = torch.cat([cache_k, k_new], dim=-2)
    values = torch.cat([cache_v, v_new], dim=-2)
    scores = q_new @ keys.transpose(-2, -1) / math.sqrt(q_new.shape[-1])
    weights = (scores - scores.amax(dim=-1, keepdim=True)).exp()
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ values, keys, values
