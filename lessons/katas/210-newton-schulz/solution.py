import torch

COEFFICIENTS = (3.4445, -4.7750, 2.0315)  # Muon's tuned quintic (a, b, c)


def newton_schulz(g: torch.Tensor, steps: int = 5) -> torch.Tensor:
    """Muon's quintic Newton–Schulz iteration on g / ‖g‖_F."""
    a, b, c = COEFFICIENTS
    x = g / (g.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    tall = x.shape[-2] > x.shape[-1]
    if tall:  # iterate on the short side: X·Xᵀ is then the smaller square
        x = x.transpose(-2, -1)
    for _ in range(steps):
        gram = x @ x.transpose(-2, -1)
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.transpose(-2, -1) if tall else x
