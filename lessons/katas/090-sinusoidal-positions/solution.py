import torch


def sinusoidal_positions(T: int, d: int, base: float = 10000.0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The (T, d) sinusoidal position table, sin in even columns and cos in odd ones."""
    positions = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    even = torch.arange(0, d, 2, dtype=torch.float64)
    angles = positions / base ** (even / d)  # (T, d/2)
    table = torch.zeros(T, d, dtype=torch.float64)
    table[:, 0::2] = angles.sin()
    table[:, 1::2] = angles.cos()
    return table.to(dtype)
