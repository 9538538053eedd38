import torch


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """The inverse of split_heads: x (B, H, T, dh) becomes (B, T, H·dh).

    For each token, head 0's dh numbers come first, then head 1's, and so on.
    """
    raise NotImplementedError("write merge_heads")
