import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Probabilities along ``dim``: exp(x) / sum(exp(x)), computed without overflow."""
    # The largest logit of each row becomes 0, so every exponential lies in [0, 1].
    shifted = x - x.amax(dim=dim, keepdim=True)
    weights = shifted.exp()
    return weights / weights.sum(dim=dim, keepdim=True)
