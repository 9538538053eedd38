import torch


def rope(x: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotate consecutive pairs of the vector at position t by t·θ_i."""
    T, d = x.shape[-2], x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.arange(T, dtype=torch.float64).unsqueeze(1) * theta  # (T, d/2)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    first, second = x[..., 0::2], x[..., 1::2]
    turned = torch.stack([first * cos - second * sin, first * sin + second * cos], dim=-1)
    return turned.flatten(-2)
