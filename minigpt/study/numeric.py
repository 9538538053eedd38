"""Numeric flashcards: generated from parameters with minigpt's own maths, checked with a tolerance.

``generate(name, params)`` returns a ``NumericItem`` (prompt, value, worked solution); the deck
files only hold the parameters (see ``minigpt.study.decks``). Typed answers are read by the app's one
reader of numbers, ``minigpt.numbers.parse_number`` (``7.09M``, ``1/4``, ``25%`` …), and compared by
value with the tolerance stated in the question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from minigpt.numbers import MAX_NUMBER_CHARS, number_text, parse_number


def __getattr__(name: str):
    """``GENERATORS`` and ``block_params`` from minigpt.study.generators, imported on first use:
    reading a number (``parse_number``) must not import torch (``minigpt cards`` is torch-free)."""
    if name in ("GENERATORS", "block_params"):
        from minigpt.study import generators

        return getattr(generators, name)
    raise AttributeError(name)


@dataclass(frozen=True)
class NumericItem:
    generator: str
    params: dict
    prompt: str
    value: float | tuple[int, ...]
    answer_text: str
    solution: str                 # worked breakdown shown after answering
    tolerance: float = 0.01       # relative
    abs_tolerance: float = 0.0    # absolute; the wider of the two applies

    @property
    def is_shape(self) -> bool:
        return isinstance(self.value, tuple)

    @property
    def tolerance_note(self) -> str:
        """Stated with the question, so the learner knows how exact to be."""
        if self.is_shape:
            return "exact shape"
        return tolerance_text(self.tolerance, self.abs_tolerance, float(self.value))


@dataclass(frozen=True)
class NumericResult:
    correct: bool
    parsed: float | tuple[int, ...] | None
    expected: float | tuple[int, ...]
    message: str
    solution: str


def tolerance_text(tolerance: float, abs_tolerance: float, value: float) -> str:
    """How close an answer must be, in words: the wider of the relative and absolute bounds."""
    allowed = max(abs_tolerance, tolerance * abs(value))
    if allowed == 0:
        return "exact value"
    if abs_tolerance >= tolerance * abs(value):
        return f"within ±{number_text(abs_tolerance, significant=4, thousands=',')}"
    return f"within {tolerance:.2%}".replace(".00%", "%") + " of the answer"


def parse_shape(text: str) -> tuple[int, ...]:
    """``(2, 12, 10, 64)``, ``[2,12,10,64]``, ``2x12x10x64`` or ``2 12 10 64``."""
    if len(text.strip()) > MAX_NUMBER_CHARS:
        raise ValueError(f"that is too long for a shape ({MAX_NUMBER_CHARS} characters at most)")
    parts = [p for p in re.split(r"[\s,x×*()\[\]]+", text.strip().lower()) if p]
    if not parts or not all(p.isascii() and p.isdigit() for p in parts):
        raise ValueError(f"cannot read {text!r} as a shape such as (2, 4, 8, 16)")
    return tuple(int(p) for p in parts)


def check(item: NumericItem, text: str) -> NumericResult:
    """Compare a typed answer with the item's value within its tolerance."""
    try:
        got = parse_shape(text) if item.is_shape else parse_number(text)
    except ValueError as e:
        return NumericResult(False, None, item.value, str(e), item.solution)
    if item.is_shape:
        ok = got == item.value
        msg = "right" if ok else f"expected {item.answer_text}"
        return NumericResult(ok, got, item.value, msg, item.solution)
    want = float(item.value)
    ok = values_agree(got, want, item.tolerance, item.abs_tolerance)
    msg = "right" if ok else f"expected {item.answer_text} ({item.tolerance_note})"
    return NumericResult(ok, got, want, msg, item.solution)


def values_agree(got: float, want: float, tolerance: float = 0.0,
                 abs_tolerance: float = 0.0) -> bool:
    """Equal within the wider of a relative and an absolute tolerance (plus float rounding)."""
    allowed = max(abs_tolerance, tolerance * abs(want), 1e-9 * max(abs(want), 1e-300))
    return abs(got - want) <= allowed


def generate(name: str, params: dict, *, tolerance: float | None = None,
             abs_tolerance: float | None = None) -> NumericItem:
    """Build a numeric card's question from its generator (``minigpt.study.generators``)."""
    from minigpt.study.generators import GENERATORS

    if name not in GENERATORS:
        raise ValueError(f"unknown generator {name!r}; known: {', '.join(GENERATORS)}")
    fn, rel, ab = GENERATORS[name]
    prompt, value, answer_text, solution = fn(**params)
    return NumericItem(name, dict(params), prompt, value, answer_text, solution,
                       rel if tolerance is None else float(tolerance),
                       ab if abs_tolerance is None else float(abs_tolerance))
