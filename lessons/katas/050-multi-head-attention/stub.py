import math

import torch


def multi_head_attention(x: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor, w_v: torch.Tensor,
                         w_o: torch.Tensor, n_head: int) -> torch.Tensor:
    """Causal multi-head self-attention of x (B, T, d).

    The projections are right-multiplied: q = x @ w_q, and so on; every w is (d, d).
    Each of the n_head heads attends over its own d // n_head columns, causally, with
    the scale 1/√(d // n_head). The heads are merged back to (B, T, d) and multiplied
    by w_o. Returns (B, T, d).
    """
    raise NotImplementedError("write multi_head_attention")
