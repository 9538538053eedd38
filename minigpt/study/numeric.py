"""Numeric flashcards: generated from parameters with minigpt's own maths, checked with a tolerance.

``generate(name, params)`` returns a ``NumericItem`` (prompt, value, worked solution); the deck
files only hold the parameters (see ``minigpt.study.decks``). ``parse_number`` reads what a learner
types: ``7.09M``, ``7,087,872``, ``7.1e6``, ``0.25``, ``1/4``, ``25%``, ``~3.2k``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import torch

from minigpt.teaching.attention import softmax, split_heads


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


@dataclass(frozen=True)
class NumericResult:
    correct: bool
    parsed: float | tuple[int, ...] | None
    expected: float | tuple[int, ...]
    message: str
    solution: str


_SUFFIX = {"k": 1e3, "m": 1e6, "mn": 1e6, "b": 1e9, "bn": 1e9, "g": 1e9, "t": 1e12}
_THOUSANDS = re.compile(r"^\d{1,3}(,\d{3})+(\.\d+)?$")


def parse_number(text: str) -> float:
    """Read a number as a learner might type it; raises ValueError with a readable message."""
    s = text.strip().lower().replace("\u2212", "-").replace("_", "").replace(" ", "")
    s = s.lstrip("~≈=")
    if not s:
        raise ValueError("no number given")
    scale = 1.0
    if s.endswith("%"):
        s, scale = s[:-1], 0.01
    m = re.match(r"^(.*?)(?:[x×*]10(?:\^|\*\*)([-+]?\d+))$", s)
    if m:
        s, scale = m.group(1), scale * 10.0 ** int(m.group(2))
    m = re.match(r"^(.*?\d)(k|mn|m|bn|b|g|t)$", s)
    if m:
        s, scale = m.group(1), scale * _SUFFIX[m.group(2)]
    if _THOUSANDS.match(s.lstrip("-+")):
        s = s.replace(",", "")
    elif s.count(",") == 1 and "." not in s:
        s = s.replace(",", ".")          # decimal comma: 0,25
    if s.count("/") == 1:
        num, den = s.split("/")
        try:
            n, d = float(num), float(den)
        except ValueError:
            raise ValueError(f"cannot read {text!r} as a fraction") from None
        if d == 0:
            raise ValueError("division by zero")
        return n / d * scale
    try:
        value = float(s)
    except ValueError:
        raise ValueError(f"cannot read {text!r} as a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value * scale


def parse_shape(text: str) -> tuple[int, ...]:
    """``(2, 12, 10, 64)``, ``[2,12,10,64]``, ``2x12x10x64`` or ``2 12 10 64``."""
    parts = [p for p in re.split(r"[\s,x×*()\[\]]+", text.strip().lower()) if p]
    if not parts or not all(p.isdigit() for p in parts):
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
    allowed = max(item.abs_tolerance, item.tolerance * abs(want))
    ok = abs(got - want) <= allowed + 1e-12
    msg = "right" if ok else f"expected {item.answer_text} (±{_fmt(allowed)})"
    return NumericResult(ok, got, want, msg, item.solution)


def _fmt(x: float) -> str:
    if float(x).is_integer() and abs(x) >= 1000:
        return f"{int(x):,}"
    return f"{x:.4g}"


# -- generators -------------------------------------------------------------------------------
def block_params(d: int) -> dict[str, int]:
    """Parameters of one pre-norm GPT block with biases and a 4x FFN, part by part."""
    attention = 4 * d * d + 4 * d          # W_Q, W_K, W_V, W_O and their biases
    ffn = d * 4 * d + 4 * d + 4 * d * d + d  # d -> 4d and 4d -> d, with biases
    norms = 2 * 2 * d                      # two LayerNorms, each a gain and a shift
    return {"attention": attention, "ffn": ffn, "layernorms": norms,
            "total": attention + ffn + norms}


def _gen_block_params(d: int) -> tuple[str, float, str, str]:
    p = block_params(int(d))
    assert p["total"] == 12 * d * d + 13 * d
    prompt = (f"How many trainable numbers sit in one pre-norm GPT block with d_model = {d}, "
              f"biases everywhere and a feed-forward layer 4× wide? (Ignore embeddings.)")
    sol = (f"attention: 4·d² + 4·d = {p['attention']:,}\n"
           f"feed-forward: d·4d + 4d + 4d·d + d = 8·d² + 5·d = {p['ffn']:,}\n"
           f"two LayerNorms (gain + shift each): 4·d = {p['layernorms']:,}\n"
           f"total: 12·d² + 13·d = {p['total']:,} ≈ {p['total'] / 1e6:.2f}M")
    return prompt, float(p["total"]), f"{p['total']:,}", sol


def _gen_softmax(scores: list[float], pick: int = 0) -> tuple[str, float, str, str]:
    w = softmax(torch.tensor(scores, dtype=torch.float64))
    m = max(scores)
    exps = [math.exp(s - m) for s in scores]
    total = sum(exps)
    shown = ", ".join(f"{s:g}" for s in scores)
    prompt = (f"Scores [{shown}] go through a softmax. What weight does position {pick + 1} get? "
              f"(two or three decimals)")
    sol = (f"subtract the max ({m:g}) for stability: exp(s − {m:g}) = "
           + ", ".join(f"{e:.4f}" for e in exps)
           + f"\nsum = {total:.4f}\nweights = " + ", ".join(f"{float(x):.3f}" for x in w)
           + f"\nposition {pick + 1}: {float(w[pick]):.3f} (the row sums to 1)")
    return prompt, float(w[pick]), f"{float(w[pick]):.3f}", sol


def _gen_sqrt_scale(score: float, d_k: int) -> tuple[str, float, str, str]:
    root = math.sqrt(d_k)
    val = score / root
    prompt = (f"A query·key dot product comes out at {score:g} in a head with d_k = {d_k}. "
              f"What score enters the softmax after scaling?")
    sol = (f"√d_k = √{d_k} = {root:.4g}\nscaled score = {score:g} / {root:.4g} = {val:.4g}\n"
           f"why: with unit-variance entries a d_k-term dot product has variance d_k, so "
           f"dividing by √d_k brings its spread back to about 1")
    return prompt, val, f"{val:.4g}", sol


def _gen_head_split(batch: int, seq: int, d: int, heads: int) -> tuple[str, tuple, str, str]:
    per_item = split_heads(torch.zeros(seq, d, dtype=torch.float64), heads)
    shape = (batch, *per_item.shape)
    prompt = (f"A tensor of queries has shape (B={batch}, T={seq}, d={d}). After splitting into "
              f"{heads} heads and moving the head axis forward, what is its shape?")
    sol = (f"d_head = d / heads = {d} / {heads} = {d // heads}\n"
           f"view as (B, T, heads, d_head) = ({batch}, {seq}, {heads}, {d // heads})\n"
           f"transpose T and heads → (B, heads, T, d_head) = {shape}")
    return prompt, shape, str(shape), sol


GENERATORS = {
    "block_params": (_gen_block_params, 0.01, 0.0),
    "softmax": (_gen_softmax, 0.0, 0.005),
    "sqrt_scale": (_gen_sqrt_scale, 0.0, 0.01),
    "head_split": (_gen_head_split, 0.0, 0.0),
}


def generate(name: str, params: dict, *, tolerance: float | None = None,
             abs_tolerance: float | None = None) -> NumericItem:
    if name not in GENERATORS:
        raise ValueError(f"unknown generator {name!r}; known: {', '.join(GENERATORS)}")
    fn, rel, ab = GENERATORS[name]
    prompt, value, answer_text, solution = fn(**params)
    return NumericItem(name, dict(params), prompt, value, answer_text, solution,
                       rel if tolerance is None else float(tolerance),
                       ab if abs_tolerance is None else float(abs_tolerance))
