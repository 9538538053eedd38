"""Numeric flashcards: generated from parameters with minigpt's own maths, checked with a tolerance.

``generate(name, params)`` returns a ``NumericItem`` (prompt, value, worked solution); the deck
files only hold the parameters (see ``minigpt.study.decks``). ``parse_number`` is the app's one
reader of typed numbers: ``7.09M``, ``7,087,872``, ``7.1e6``, ``7.1 × 10^6``, ``0.25``, ``1/4``,
``25%``, ``~3.2k``. Answers are compared by value with the tolerance stated in the question.
"""

from __future__ import annotations

import decimal
import math
import re
from dataclasses import dataclass


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


# Powers of ten a learner may write after a number; the one parser below reads all of them.
_SUFFIX = {"k": 3, "m": 6, "mn": 6, "b": 9, "bn": 9, "g": 9, "t": 12}
_THOUSANDS = re.compile(r"^\d{1,3}(,\d{3})+(\.\d+)?$")
_POWER = re.compile(r"^(.+?)[x×*]10(?:\^|\*\*)([-+]?\d+)$")
_UNIT = re.compile(r"^(.*?\d)(k|mn|m|bn|b|g|t)$")
MAX_NUMBER_CHARS = 64          # longer input is not a number a learner typed; also bounds the time
# Exact decimal arithmetic: huge exponents raise instead of overflowing to inf or to an error.
_CONTEXT = decimal.Context(prec=40, Emax=10**6, Emin=-10**6,
                           traps=[decimal.Overflow, decimal.InvalidOperation,
                                  decimal.DivisionByZero])


def _decimal(part: str, text: str) -> decimal.Decimal:
    try:
        value = _CONTEXT.create_decimal(part)
    except decimal.DecimalException:
        raise ValueError(f"cannot read {text!r} as a number") from None
    if not value.is_finite():
        raise ValueError(f"{text!r} is not a finite number")
    return value


def parse_number(text: str) -> float:
    """Read a number as a learner might type it; raises ValueError with a readable message.

    Every quiz answer that is a number goes through here, so ``1/5``, ``0.2``, ``2e-1`` and
    ``20%`` are the same answer. Values too large for a float are refused, never rounded to inf.
    """
    s = text.strip().lower().replace("\u2212", "-").replace("_", "").replace(" ", "")
    s = s.lstrip("~≈=")
    if not s:
        raise ValueError("no number given")
    if len(s) > MAX_NUMBER_CHARS:
        raise ValueError(f"that is too long for a number ({MAX_NUMBER_CHARS} characters at most)")
    exponent, percent = 0, False
    if s.endswith("%"):
        s, percent = s[:-1], True
    m = _POWER.match(s)
    if m:
        if len(m.group(2).lstrip("+-")) > 6:
            raise ValueError(f"{text!r} is far too large or too small")
        s, exponent = m.group(1), int(m.group(2))
    m = _UNIT.match(s)
    if m:
        s, exponent = m.group(1), exponent + _SUFFIX[m.group(2)]
    if _THOUSANDS.match(s.lstrip("-+")):
        s = s.replace(",", "")
    elif s.count(",") == 1 and "." not in s:
        s = s.replace(",", ".")          # decimal comma: 0,25
    try:
        if s.count("/") == 1:
            num, den = (_decimal(p, text) for p in s.split("/"))
            if den == 0:
                raise ValueError("division by zero")
            value = _CONTEXT.divide(num, den)
        else:
            value = _decimal(s, text)
        value = value.scaleb(exponent - 2 * percent, _CONTEXT)
    except decimal.DecimalException:
        raise ValueError(f"{text!r} is far too large or too small") from None
    result = float(value)
    if not math.isfinite(result):
        raise ValueError(f"{text!r} is too large for a number here")
    return result


def is_number(text: str) -> bool:
    """True when ``parse_number`` reads the text (used to tell numeric blanks from words)."""
    try:
        parse_number(text)
    except ValueError:
        return False
    return True


def tolerance_text(tolerance: float, abs_tolerance: float, value: float) -> str:
    """How close an answer must be, in words: the wider of the relative and absolute bounds."""
    allowed = max(abs_tolerance, tolerance * abs(value))
    if allowed == 0:
        return "exact value"
    if abs_tolerance >= tolerance * abs(value):
        return f"within ±{_fmt(abs_tolerance)}"
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


def _fmt(x: float) -> str:
    if float(x).is_integer() and abs(x) >= 1000:
        return f"{int(x):,}"
    return f"{x:.4g}"


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
