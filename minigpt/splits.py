"""The seeded train / validation / test split: 80/10/10 of a shuffled list, the same for the same
seed on every machine, with at least one item in validation and test from ``MIN_ITEMS`` up."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import torch

MIN_ITEMS = 3  # one each for training, validation and test
PY_SHUFFLE_MAX = 1_000_000  # splits up to this size keep the standard library's seeded shuffle


@dataclass
class Splits:
    train: list[str]
    val: list[str]
    test: list[str]


def split_sizes(n: int, fractions=(0.8, 0.1)) -> tuple[int, int, int]:
    """80/10/10, but from ``MIN_ITEMS`` items up validation and test get at least one each."""
    n_train, n_val = int(fractions[0] * n), int(fractions[1] * n)
    if n >= MIN_ITEMS:
        n_val = max(n_val, 1)
        n_train = min(n_train, n - n_val - 1)
    return n_train, n_val, n - n_train - n_val


def split_order(n: int, seed: int = 42) -> np.ndarray:
    """A seeded permutation of ``range(n)``: the standard library's shuffle (as every earlier
    version) up to ``PY_SHUFFLE_MAX`` items, torch's above (the former needs ~40 bytes an item)."""
    if n <= PY_SHUFFLE_MAX:
        order = list(range(n))
        random.Random(seed).shuffle(order)
        return np.array(order, dtype=np.int32)
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed), dtype=torch.int32).numpy()


def split_words(words: list[str], seed: int = 42, fractions=(0.8, 0.1)) -> Splits:
    """Deterministic 80/10/10 split: a seeded shuffle of the list, then cut."""
    order = split_order(len(words), seed).tolist()
    shuffled = [words[i] for i in order]
    n_train, n_val, _ = split_sizes(len(words), fractions)
    return Splits(shuffled[:n_train], shuffled[n_train : n_train + n_val], shuffled[n_train + n_val :])
