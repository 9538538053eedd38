import torch


def rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotate every consecutive pair (x[2i], x[2i+1]) of the vector at position t by the
    angle t·θ_i, θ_i = base^(-2i/d), counterclockwise.

    x: (..., T, d), d even; positions are 0..T-1 along the second-to-last axis.
    Returns the same shape and dtype. The angles may be computed in float32 or float64:
    float64 inputs are checked to about 1e-5, which both meet.
    """
    raise NotImplementedError("write rope")
