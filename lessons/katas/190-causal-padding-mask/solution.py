import torch


def causal_padding_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """True where query i may attend to key j: j ≤ i and token j is real."""
    real = attention_mask.bool()
    T = real.shape[-1]
    not_future = torch.ones(T, T, dtype=torch.bool).tril()
    return (not_future & real[:, None, :]).unsqueeze(1)
