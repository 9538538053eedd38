import torch


def sampling_filter(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                    top_p: float | None = None) -> torch.Tensor:
    """The probabilities a sampler draws the next token from, for logits (..., V).

    Apply the temperature, then keep the top_k largest (None: all), then keep the smallest
    set of the most likely tokens whose probabilities sum to at least top_p (None: all).
    Removed tokens get probability 0; each row of the result sums to 1.
    """
    raise NotImplementedError("write sampling_filter")
