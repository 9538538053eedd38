import torch


def sinusoidal_positions(T: int, d: int, base: float = 10000.0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The (T, d) sinusoidal position table, d even:

    pe[pos, 2i] = sin(pos / base^(2i/d)),  pe[pos, 2i+1] = cos(pos / base^(2i/d)).
    """
    raise NotImplementedError("write sinusoidal_positions")
