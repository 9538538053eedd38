import torch


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor, ignore_index: int = -1) -> torch.Tensor:
    """Mean of -log softmax(logits)[target] over the positions not ignored."""
    top = logits.amax(dim=-1, keepdim=True)
    log_total = top.squeeze(-1) + (logits - top).exp().sum(dim=-1).log()
    kept = targets != ignore_index
    safe = torch.where(kept, targets, torch.zeros_like(targets))
    picked = logits.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    losses = (log_total - picked) * kept
    return losses.sum() / kept.sum()
