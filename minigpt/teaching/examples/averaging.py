"""Worked examples for "Averaging the past": a loop, a triangular matrix, a masked softmax."""

from __future__ import annotations

import torch

from minigpt.teaching import averaging
from minigpt.teaching.examples.registry import example, fmt, matrix

TOKENS = ["t0", "t1", "t2", "t3"]


def _x() -> torch.Tensor:
    return torch.tensor(averaging.EXAMPLE_X, dtype=torch.float64)


@example("averaging.loop_vs_matrix", "Running means: a loop, then one matrix multiply")
def _loop_vs_matrix() -> str:
    x = _x()
    W = averaging.averaging_matrix(4)
    loop, product = averaging.running_means(x), W @ x
    same = torch.allclose(loop, product)
    return ("The tokens x (4 rows, 2 features):\n\n" + matrix(x, TOKENS, ["f0", "f1"], 1)
            + "\n\nThe averaging matrix W, lower-triangular, each row summing to 1:\n\n"
            + matrix(W, TOKENS, TOKENS, 3)
            + "\n\nW·x (row t is the mean of rows 0…t):\n\n" + matrix(product, TOKENS, ["f0", "f1"], 3)
            + f"\n\nThe loop gives the same rows: {'yes' if same else 'no'} "
              f"(largest difference {fmt((loop - product).abs().max().item(), 1)}). Row t3 is "
              f"({fmt(x[:, 0].sum().item(), 0)}/4, {fmt(x[:, 1].sum().item(), 0)}/4).")


@example("averaging.masked_softmax", "The same weights from a masked softmax, then scores that vary")
def _masked_softmax() -> str:
    zeros = torch.zeros(4, 4, dtype=torch.float64)
    from_zeros = averaging.causal_softmax(zeros)
    same = torch.allclose(from_zeros, averaging.averaging_matrix(4))
    scores = torch.tensor(averaging.EXAMPLE_SCORES, dtype=torch.float64)
    weights = averaging.causal_softmax(scores)
    return (f"Scores all 0, future set to −∞, softmax per row: equal to W above? "
            f"{'yes' if same else 'no'} (largest difference "
            f"{fmt((from_zeros - averaging.averaging_matrix(4)).abs().max().item(), 1)}).\n\nNow let the scores differ "
              "(as q·k would; the 9s above the diagonal are masked, so they never count):\n\n"
            + matrix(scores, TOKENS, TOKENS, 1)
            + "\n\nweights:\n\n" + matrix(weights, TOKENS, TOKENS, 3)
            + "\n\nweights·x:\n\n" + matrix(weights @ _x(), TOKENS, ["f0", "f1"], 3)
            + "\n\nEach row still sums to 1 and never looks ahead, but t1 and t2 now lean on "
              "themselves and t3 on t0 and itself: a weighted average chosen by the data.")
