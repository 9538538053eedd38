import math

import torch


def gqa_kv_step(q_new: torch.Tensor, k_new: torch.Tensor, v_new: torch.Tensor,
                cache_k: torch.Tensor, cache_v: torch.Tensor):
    """Grouped-query attention for one new token over its group's cached keys and values."""
    keys = torch.cat([cache_k, k_new], dim=-2)
    values = torch.cat([cache_v, v_new], dim=-2)
    per_group = q_new.shape[1] // keys.shape[1]
    k_heads = keys.repeat_interleave(per_group, dim=1)  # head h reads group h // per_group
    v_heads = values.repeat_interleave(per_group, dim=1)
    scores = q_new @ k_heads.transpose(-2, -1) / math.sqrt(q_new.shape[-1])
    weights = (scores - scores.amax(dim=-1, keepdim=True)).exp()
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ v_heads, keys, values
