import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Probabilities along ``dim``: exp(x) / sum(exp(x)), computed without overflow.

    x: a float tensor of any shape. Returns a tensor of the same shape and dtype whose
    slices along ``dim`` are non-negative and sum to 1. Large logits (1000 and more) must
    not overflow. A slice that is -inf everywhere has nothing to share out: it must come
    back as NaN in every place, as torch.softmax gives (not 0, as some "safe" kernels do).
    Do not call torch.softmax: writing it is the exercise.
    """
    raise NotImplementedError("write softmax")
