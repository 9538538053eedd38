"""Every token averages its past: a loop, a lower-triangular matrix, and a masked softmax.

Three ways to compute the same thing, each a step closer to attention: the running mean of the
rows seen so far written as a loop, as one multiply by a row-normalised lower-triangular matrix,
and as the softmax of an all-zero score matrix with the future set to −∞. Attention keeps the
last form and lets the scores depend on the tokens.
"""

from __future__ import annotations

import torch
from torch import Tensor


def running_means(x: Tensor) -> Tensor:
    """Row t of the result is the mean of rows 0…t of x, by a plain loop."""
    return torch.stack([x[: t + 1].mean(dim=0) for t in range(x.shape[0])])


def averaging_matrix(T: int, dtype=torch.float64) -> Tensor:
    """Lower-triangular T×T matrix whose row t holds 1/(t+1) in its first t+1 columns."""
    ones = torch.ones(T, T, dtype=dtype).tril()
    return ones / ones.sum(dim=1, keepdim=True)


def causal_softmax(scores: Tensor) -> Tensor:
    """Softmax of each row after the entries above the diagonal are set to −∞."""
    T = scores.shape[-1]
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    return scores.masked_fill(future, float("-inf")).softmax(dim=-1)


EXAMPLE_X = [[1.0, 0.0], [3.0, 2.0], [2.0, 4.0], [6.0, 2.0]]  # four tokens, two features each
# Scores that depend on the tokens: what attention would compute as q·k (here chosen small).
# The entries above the diagonal are never used: the mask replaces them with −∞.
EXAMPLE_SCORES = [[0.0, 9.0, 9.0, 9.0], [0.5, 1.5, 9.0, 9.0],
                  [0.0, 0.0, 2.0, 9.0], [1.0, 0.0, 0.5, 1.0]]
