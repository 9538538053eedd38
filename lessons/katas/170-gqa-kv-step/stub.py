import math

import torch


def gqa_kv_step(q_new: torch.Tensor, k_new: torch.Tensor, v_new: torch.Tensor,
                cache_k: torch.Tensor, cache_v: torch.Tensor):
    """One decoding step of grouped-query attention: H query heads share G key/value heads.

    q_new: (B, H, 1, d), the new token's queries; k_new, v_new: (B, G, 1, d), its keys and values.
    cache_k, cache_v: (B, G, T, d), the keys and values of the T earlier tokens (T may be 0).
    H is a multiple of G: query heads h = g·(H/G) … (g+1)·(H/G) - 1 all use key/value head g.
    Returns (out, new_cache_k, new_cache_v): out (B, H, 1, d) is each query head's attention over
    its group's T + 1 positions (scaled by 1/√d); the caches grow to (B, G, T + 1, d).
    """
    raise NotImplementedError("write gqa_kv_step")
