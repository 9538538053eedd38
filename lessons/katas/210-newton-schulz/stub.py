import torch


def newton_schulz(g: torch.Tensor, steps: int = 5) -> torch.Tensor:
    """≈ U·Vᵀ of g = U·S·Vᵀ, Muon's update direction, without an SVD.

    g: (..., m, n), a matrix or a stack of them; steps: how many iterations.
    Normalise g by its Frobenius norm (+ 1e-7), then repeat `steps` times
    X ← a·X + (b·(X·Xᵀ) + c·(X·Xᵀ)²)·X with (a, b, c) = (3.4445, -4.7750, 2.0315).
    The result has g's shape and dtype; its singular values are near 1 (not exactly 1).
    Computing inside in float32 or float64 are both accepted.
    """
    raise NotImplementedError("write newton_schulz")
