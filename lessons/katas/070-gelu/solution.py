import math

import torch


def gelu(x: torch.Tensor) -> torch.Tensor:
    """GELU(x) = x · Φ(x), the exact erf form."""
    normal_cdf = 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
    return x * normal_cdf
