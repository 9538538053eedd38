import torch


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """The inverse of split_heads: x (B, H, T, dh) becomes (B, T, H·dh)."""
    batch, heads, time, per_head = x.shape
    return x.transpose(1, 2).reshape(batch, time, heads * per_head)
