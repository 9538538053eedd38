import torch


def sinusoidal_positions(T: int, d: int, base: float = 10000.0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The (T, d) sinusoidal position table, d even:

    pe[pos, 2i] = sin(pos / base^(2i/d)),  pe[pos, 2i+1] = cos(pos / base^(2i/d)).

    The angles may be computed in float32 or float64 and cast to ``dtype``: a float64
    table is checked to about 1e-5, which both meet.
    """
    raise NotImplementedError("write sinusoidal_positions")
