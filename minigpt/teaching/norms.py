"""LayerNorm, BatchNorm and RMSNorm written out on small float64 tensors, for teaching."""

from __future__ import annotations

import torch

Tensor = torch.Tensor


def _t(x) -> Tensor:
    return torch.as_tensor(x, dtype=torch.float64)


def layer_norm(x, eps: float = 0.0, gamma=None, beta=None) -> Tensor:
    """Normalise over the last axis (each token on its own). eps=0 gives the textbook numbers."""
    x = _t(x)
    mu = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, unbiased=False, keepdim=True)
    y = (x - mu) / torch.sqrt(var + eps)
    if gamma is not None:
        y = y * _t(gamma)
    if beta is not None:
        y = y + _t(beta)
    return y


def batch_norm(x, eps: float = 0.0) -> Tensor:
    """Normalise over the batch axis (each feature across examples)."""
    x = _t(x)
    mu = x.mean(dim=0, keepdim=True)
    var = x.var(dim=0, unbiased=False, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps)


def rms_norm(x, eps: float = 0.0) -> Tensor:
    """Scale by the root mean square only: no mean subtraction, no bias."""
    x = _t(x)
    return x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + eps)
