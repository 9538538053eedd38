"""What a checker is: the cases of one kata and the classic mistakes, each written out.

A case is an input chosen to catch something (large logits, a batch of one, a shape that is not
square) with a label in the learner's terms. A mistake is a wrong solution with a name: when the
learner's output on the first failing case equals the mistake's output on it, feedback names the
mistake ("the scores were not divided by √d_k").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class Case:
    label: str
    args: tuple
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Mistake:
    message: str  # what the learner did, as a sentence: "the scores were not divided by √d_k"
    function: Callable


@dataclass(frozen=True)
class Checker:
    cases: Callable[[], list[Case]]
    mistakes: tuple[Mistake, ...] = ()
    rtol: float | None = None  # None: the dtype's default (minigpt.katas.values.TOLERANCE)
    atol: float | None = None
    # A kata whose function is not called with the case's values: the name of the adapter in
    # minigpt.katas.fast_memory.ADAPTERS that calls it (and returns what is graded).
    adapter: str | None = None
    # compare(case, expected, obtained, difference) → where they differ or None, when a kata grades
    # more than the values; same(mistake's value, obtained, difference) → whether a mistake matches.
    compare: Callable | None = None
    same: Callable | None = None


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(g: torch.Generator, *shape: int, dtype=torch.float64, scale: float = 1.0) -> torch.Tensor:
    return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale).to(dtype)


def shape_text(t: torch.Tensor) -> str:
    return "×".join(str(s) for s in t.shape)


def clone(value):
    """A deep copy of a case's arguments, so neither side can change what the other sees."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(clone(v) for v in value)
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    return value
