"""The training loss written out: log-softmax, negative log-likelihood, perplexity, bits,
label smoothing, and the DPO preference loss, on numbers small enough to check by hand.

``log_softmax_naive`` is the textbook formula log(e^z / Σ e^z); ``log_softmax_stable``
subtracts the largest logit first (log-sum-exp), which gives the same values wherever the naive
one works and finite values where e^z overflows (z > 88.7 in float32).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor
from torch.nn import functional as F


def log_softmax_naive(z: Tensor) -> Tensor:
    """log(e^z / Σ e^z), computed in z's dtype exactly as written."""
    e = torch.exp(z)
    return torch.log(e / e.sum(dim=-1, keepdim=True))


def log_softmax_stable(z: Tensor) -> Tensor:
    """z − m − log Σ e^(z − m) with m = max z: every exponent is ≤ 0, so nothing overflows."""
    m = z.max(dim=-1, keepdim=True).values
    return z - m - torch.log(torch.exp(z - m).sum(dim=-1, keepdim=True))


def nll(logits: Tensor, target: int) -> float:
    """−log p(target) for one row of logits."""
    return -log_softmax_stable(logits.double())[target].item()


def perplexity(loss_nats: float) -> float:
    """e^loss: the number of equally likely choices that would give the same loss."""
    return math.exp(loss_nats)


def bits_per_token(loss_nats: float) -> float:
    """The same loss in bits: divide by ln 2."""
    return loss_nats / math.log(2)


def label_smoothed_loss(logits: Tensor, target: int, smoothing: float) -> float:
    """(1 − ε)·(−log p_target) + ε · mean over all classes of (−log p_k): PyTorch's definition."""
    logp = log_softmax_stable(logits.double())
    return ((1 - smoothing) * -logp[target] + smoothing * -logp.mean()).item()


def dpo_loss(policy_chosen: float, policy_rejected: float, ref_chosen: float,
             ref_rejected: float, beta: float = 0.1) -> float:
    """−log σ(β·[(log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l))]).

    Arguments are log-probabilities of whole responses: the chosen (preferred) one y_w and the
    rejected one y_l, under the model being tuned (policy) and the frozen reference model.
    """
    margin = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    return -F.logsigmoid(torch.tensor(beta * margin, dtype=torch.float64)).item()


def teacher_forcing_rows(model, vocab, word: str) -> list[tuple[str, str, float]]:
    """For each position of ``word``: the true prefix the model is fed, the true next character,
    and the probability the model gives it. The loss is the mean of −log of those."""
    boundary = vocab.chars[0]  # "." starts and ends every name
    ids = vocab.encode(word)
    x = torch.tensor([[0] + ids])
    targets = ids + [0]
    with torch.no_grad():
        logits = model(x)[0]
    probs = logits[0].double().softmax(dim=-1)
    shown = boundary + word
    return [(shown[: t + 1], vocab.chars[target], probs[t, target].item())
            for t, target in enumerate(targets)]
