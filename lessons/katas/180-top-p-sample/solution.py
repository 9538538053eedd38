import torch


def top_p_sample(logits: torch.Tensor, temperature: float, top_p: float, u: torch.Tensor):
    """The nucleus distribution at this temperature, and the token u draws from it."""
    scaled = logits / temperature
    probs = (scaled - scaled.amax(dim=-1, keepdim=True)).exp()
    probs = probs / probs.sum(dim=-1, keepdim=True)
    ordered, order = probs.sort(dim=-1, descending=True)
    before = ordered.cumsum(dim=-1) - ordered  # mass of the more likely tokens
    drop = torch.zeros_like(before, dtype=torch.bool).scatter(-1, order, before >= top_p)
    probs = probs.masked_fill(drop, 0.0)
    probs = probs / probs.sum(dim=-1, keepdim=True)
    running = probs.cumsum(dim=-1)
    token = (running <= u.unsqueeze(-1)).sum(dim=-1).clamp(max=probs.shape[-1] - 1)
    return probs, token
