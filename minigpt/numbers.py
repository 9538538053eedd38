"""Numbers typed by a learner and numbers shown to one: the one reader and the one writer.

:func:`parse_number` reads what a learner types anywhere (a quiz answer, a stepper cell, an
explorer's vector): ``7.09M``, ``7,087,872``, ``7.1e6``, ``7.1 × 10^6``, ``0.25``, ``1/4``,
``25%``, ``~3.2k`` and ``0,25`` are all numbers, and ``1/5``, ``0.2``, ``2e-1`` and ``20%`` the
same one. :func:`number_text` is the formatter the library's number writers share; its keywords
name the few ways they differ (settings exact, lesson tables in fixed decimals, tolerances grouped).
Torch-free: ``minigpt cards`` reads answers without importing it.
"""

from __future__ import annotations

import decimal
import math
import re

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
        raise ValueError(f"{text!r} is not a number") from None
    if not value.is_finite():
        raise ValueError(f"{text!r} is not a finite number")
    return value


def parse_number(text: str) -> float:
    """Read a number as a learner might type it; raises ValueError with a readable message.

    Values too large for a float are refused, never rounded to inf; inf and nan are refused too.
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
                raise ValueError(f"{text!r} divides by zero")
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


def number_text(x: float, *, decimals: int | None = None, significant: int | None = None,
                thousands: str | None = None, signed_zero: bool = False) -> str:
    """``x`` as text. By default exact, the notation of settings such as learning rates: plain
    digits from 0.1 to 10,000 (0.25, 3000), otherwise a mantissa and a power of ten without
    padding (5e-3, 1.5e-3, 1e-2, 1e6); the text reads back as the same float.

    ``decimals``: fixed decimals (a lesson's table, a stepper cell), infinities as −∞ and +∞, and a
    value that rounds to zero without its minus unless ``signed_zero``. ``significant``: at most
    that many significant digits (Python's ``g``). ``thousands``: whole numbers from 1000 up in
    full, digits grouped with this separator (``","``: 7,087,872; ``""``: 1000000).
    """
    x = float(x)
    if decimals is not None:
        if math.isinf(x):
            return "−∞" if x < 0 else "+∞"
        s = f"{x:.{decimals}f}"
        return s[1:] if not signed_zero and s.startswith("-") and float(s) == 0 else s
    if thousands is not None and x.is_integer() and abs(x) >= 1000:
        return f"{int(x):,}".replace(",", thousands)
    if significant is not None:
        return f"{x:.{significant}g}"
    if x == 0 or 0.1 <= abs(x) < 1e4 or x != x or math.isinf(x):
        return f"{x:g}" if float(f"{x:g}") == x else repr(x)
    sign, digits, exponent = decimal.Decimal(repr(x)).normalize().as_tuple()
    power = exponent + len(digits) - 1
    mantissa = str(digits[0]) + ("." + "".join(map(str, digits[1:])) if len(digits) > 1 else "")
    return f"{'-' if sign else ''}{mantissa}e{power}"
