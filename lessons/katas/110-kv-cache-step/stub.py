import math

import torch


def kv_cache_step(q_new: torch.Tensor, k_new: torch.Tensor, v_new: torch.Tensor,
                  cache_k: torch.Tensor, cache_v: torch.Tensor):
    """Attention for one new token, reusing the keys and values of the tokens before it.

    q_new, k_new, v_new: (B, H, 1, d), the new token's query, key and value.
    cache_k, cache_v: (B, H, T, d), the keys and values of the T earlier tokens (T may be 0).
    Returns (out, new_cache_k, new_cache_v): out (B, H, 1, d) is the new token's attention
    output over all T + 1 positions (scaled by 1/√d); the caches grow to (B, H, T + 1, d).
    """
    raise NotImplementedError("write kv_cache_step")
