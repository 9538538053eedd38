"""Named worked examples: every number a lesson shows as a result is computed here, at call time.

A lesson refers to an example by id in an ```` ```example ```` block; the app swaps the block for
``render_example(id)``. Typing results into the Markdown would let them drift from the code (the
course material has such drift: see ``attention.course.scaled_weights``), so the lessons never do.

This module holds the registry and the table helpers. Each topic registers its examples from a
module of its own (``attention``, ``model``, ``scale``); ``catalog`` imports them all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from minigpt.numbers import number_text


@dataclass(frozen=True)
class Example:
    id: str
    title: str
    build: Callable[[], str]  # returns the Markdown body (without the title)
    reads_models: bool = False  # computed on the GPT-2 folders hf fetch keeps: cached per their state

    def render(self) -> str:
        return f"**{self.title}**\n\n{self.build().strip()}\n"


EXAMPLES: dict[str, Example] = {}


def example(example_id: str, title: str, *, reads_models: bool = False):
    """Decorator: register a function returning Markdown under ``example_id`` (``reads_models``:
    it reads the fetched GPT-2 folders, so a fetch or a removal computes it again)."""

    def wrap(fn: Callable[[], str]) -> Callable[[], str]:
        if example_id in EXAMPLES:
            raise ValueError(f"example id {example_id!r} registered twice")
        EXAMPLES[example_id] = Example(example_id, title, fn, reads_models)
        return fn

    return wrap


def example_ids() -> list[str]:
    return sorted(EXAMPLES)


def render_example(example_id: str) -> str:
    try:
        ex = EXAMPLES[example_id]
    except KeyError:
        raise KeyError(
            f"unknown example id {example_id!r}; known ids: {', '.join(example_ids())}"
        ) from None
    return ex.render()


# ---------------------------------------------------------------------------------------------
# Formatting helpers: small Markdown tables that fit an 80-column terminal.


def fmt(x: float, digits: int = 3) -> str:
    """A worked number in a lesson's table or sentence: ``digits`` decimals, −∞ spelled out, and
    no minus on a value that rounds to zero (``minigpt.numbers.number_text``)."""
    return number_text(x, decimals=digits)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(str(h) for h in header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines)


def matrix(M, row_labels: Sequence[str], col_labels: Sequence[str], digits: int = 3,
           corner: str = "") -> str:
    M = torch.as_tensor(M, dtype=torch.float64)
    rows = [[f"**{row_labels[i]}**"] + [fmt(v, digits) for v in M[i].tolist()]
            for i in range(M.shape[0])]
    return table([corner] + list(col_labels), rows)


def count(n: int) -> str:
    return f"{n:,}"
