import torch


def top_p_sample(logits: torch.Tensor, temperature: float, top_p: float, u: torch.Tensor):
    """Nucleus sampling with a temperature, made deterministic by giving the uniform number u.

    logits: (..., V); temperature > 0; 0 < top_p ≤ 1; u: (...), numbers in [0, 1).
    Returns (probs, token):
      probs (..., V): the distribution after the temperature and then top-p (keep the smallest
      set of most likely tokens whose probabilities sum to at least top_p), renormalised;
      dropped tokens get 0.
      token (...) int64: the first index i (vocabulary order) where probs[..., :i + 1].sum() > u,
      the inverse-CDF draw torch.multinomial would make with that u.
    """
    raise NotImplementedError("write top_p_sample")
