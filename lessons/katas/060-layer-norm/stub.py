import torch


def layer_norm(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Normalise every vector along the last axis of x to mean 0 and variance 1, then
    scale by gamma and shift by beta (both of shape (d,)).

    y = (x - mean) / sqrt(var + eps) * gamma + beta, with the biased variance (÷ d).
    Same shape and dtype as x.
    """
    raise NotImplementedError("write layer_norm")
