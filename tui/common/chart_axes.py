"""Axis ticks that read at a glance, and the smoothing TensorBoard applies to noisy curves.

Plotext picks ticks by dividing the range evenly ("130.8 260.5" for steps, "0.00000250" for a
learning rate). These helpers choose round values instead: whole steps for step axes, 1-2-5
multiples for values, labelled in engineering notation (``2.5e-3``, ``250e-6``) when small.
"""

from __future__ import annotations

import math


def nice_step(span: float, count: int) -> float:
    """A 1, 2 or 5 × 10^k spacing that cuts ``span`` into about ``count`` intervals."""
    if span <= 0 or count < 1:
        return 1.0
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def value_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round values covering [lo, hi] (1-2-5 spacing); a single value when the range is empty."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi < lo:
        lo, hi = hi, lo
    if hi == lo:
        return [lo]
    # Round spacing can leave a short range with one tick: ask for more intervals until two show.
    for intervals in range(max(count, 1), max(count, 1) + 6):
        step = nice_step(hi - lo, intervals)
        first = math.ceil(lo / step - 1e-9) * step
        ticks = []
        k = 0
        while first + k * step <= hi + step * 1e-9:
            ticks.append(round(first + k * step, 12))
            k += 1
        if len(ticks) >= 2:
            break
    return ticks


def step_ticks(lo: float, hi: float, count: int = 5) -> list[int]:
    """Whole-number ticks for a step axis (never 130.8): spacing 1, 2, 5, 10, 20, 50…"""
    lo_i, hi_i = math.floor(lo), math.ceil(hi)
    if hi_i <= lo_i:
        return [lo_i]
    step = max(1, int(nice_step(hi_i - lo_i, count)))
    first = -(-lo_i // step) * step
    return list(range(first, hi_i + 1, step))


def eng(value: float, digits: int = 3) -> str:
    """Engineering notation: exponent a multiple of 3, trailing zeros dropped (5e-3, 250e-6, 1.2)."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    exponent = math.floor(math.log10(abs(value)) / 3) * 3
    mantissa = value / 10 ** exponent
    text = f"{mantissa:.{digits}g}"
    if "e" in text:  # rounding reached 1000: carry into the next exponent
        mantissa /= 1000
        exponent += 3
        text = f"{mantissa:.{digits}g}"
    return text if exponent == 0 else f"{text}e{exponent}"


def tick_labels(ticks: list[float]) -> list[str]:
    """Labels with just enough decimals to tell neighbouring ticks apart; engineering notation
    for values below 0.01 (learning rates) or at and above 10,000."""
    if not ticks:
        return []
    biggest = max(abs(t) for t in ticks)
    if biggest and (biggest < 0.01 or biggest >= 10_000):
        return [eng(t) for t in ticks]
    gap = min((b - a for a, b in zip(ticks, ticks[1:]) if b > a), default=1.0)
    decimals = max(0, -math.floor(math.log10(gap) + 1e-9)) if gap < 1 else 0
    return [f"{t:.{decimals}f}" for t in ticks]


def step_label(step: int) -> str:
    """Step ticks: 2500, 12k, 1.5M (short enough for a narrow axis)."""
    if abs(step) >= 1_000_000:
        return f"{step / 1e6:g}M"
    if abs(step) >= 10_000:
        return f"{step / 1e3:g}k"
    return str(step)


def smooth(ys: list[float], weight: float) -> list[float]:
    """TensorBoard's smoothing: an exponential moving average, debiased so the curve starts at the
    first point instead of at zero. ``weight`` 0 returns the values unchanged."""
    if weight <= 0 or not ys:
        return list(ys)
    out, last, norm = [], 0.0, 0.0
    for y in ys:
        last = last * weight + (1 - weight) * y
        norm = norm * weight + (1 - weight)
        out.append(last / norm)
    return out
