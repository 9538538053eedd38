import torch


def split_heads(x: torch.Tensor, n_head: int) -> torch.Tensor:
    """Cut the last axis of x (B, T, d) into n_head heads: returns (B, n_head, T, d // n_head)."""
    batch, time, width = x.shape
    per_head = x.reshape(batch, time, n_head, width // n_head)
    return per_head.transpose(1, 2)
