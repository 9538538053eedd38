"""Two decoding controls beyond temperature, top-k and top-p, applied to real next-character
distributions of the shipped MiniGPT.

- Repetition penalty (Keskar et al. 2019, the CTRL paper): the logit of every token already in
  the context is made less attractive by a factor θ > 1. CTRL divides the logit by θ; since
  dividing a negative logit would raise it, the common implementation (Hugging Face's) divides
  positive logits and multiplies negative ones.
- Min-p (Nguyen et al. 2024): keep the tokens whose probability is at least p_min times the most
  likely token's. The cut-off follows the model's confidence: a sure model keeps few, an unsure
  one many.
"""

from __future__ import annotations

import functools

import torch


def repetition_penalty(logits: torch.Tensor, seen: list[int], penalty: float) -> torch.Tensor:
    """Logits with each token in ``seen`` penalised once: ÷θ if positive, ×θ if negative."""
    out = logits.clone()
    for i in sorted(set(seen)):
        out[i] = out[i] / penalty if out[i] > 0 else out[i] * penalty
    return out


def min_p_keep(probs: torch.Tensor, min_p: float) -> torch.Tensor:
    """A mask of the tokens min-p keeps: probability ≥ min_p · (the largest probability)."""
    return probs >= min_p * probs.max()


def min_p_filter(probs: torch.Tensor, min_p: float) -> torch.Tensor:
    """The renormalised distribution over the tokens min-p keeps."""
    kept = torch.where(min_p_keep(probs, min_p), probs, torch.zeros_like(probs))
    return kept / kept.sum()


def top_p_count(probs: torch.Tensor, top_p: float) -> int:
    """How many tokens top-p keeps: the smallest set, most likely first, whose total reaches p."""
    sorted_p = torch.sort(probs, descending=True).values
    return int((torch.cumsum(sorted_p, 0) < top_p).sum().item()) + 1


@functools.lru_cache(maxsize=1)
def _shipped():
    """The shipped checkpoint, loaded once per process: the worked examples ask it several
    times."""
    from minigpt.checkpoint import load_checkpoint
    from minigpt.paths import default_checkpoint

    ck = load_checkpoint(default_checkpoint())
    ck.model.eval()
    return ck


def shipped_distribution(context: str):
    """The shipped MiniGPT's logits after a name's prefix, its vocabulary, and the prefix's ids
    (the start token left out: penalising it would penalise ending the name)."""
    from minigpt.sampling import next_distribution
    from minigpt.training.cpu_policy import one_thread

    ck = _shipped()
    with one_thread():  # one tiny forward pass: extra threads only wait on each other
        dist = next_distribution(ck.model, ck.vocab, context)
    return dist.logits, ck.vocab, ck.vocab.encode(context)
