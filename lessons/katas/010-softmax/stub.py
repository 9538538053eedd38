import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Probabilities along ``dim``: exp(x) / sum(exp(x)), computed without overflow.

    x: a float tensor of any shape. Returns a tensor of the same shape and dtype whose
    slices along ``dim`` are non-negative and sum to 1. Large logits (1000 and more) must
    not overflow. Do not call torch.softmax: writing it is the exercise.
    """
    raise NotImplementedError("write softmax")
