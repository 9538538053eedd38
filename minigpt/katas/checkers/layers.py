"""Checkers for the layer katas: LayerNorm, GELU, cross-entropy, sinusoidal positions, RoPE."""

from __future__ import annotations

import math

import torch

from minigpt.katas.checkers.base import Case, Checker, Mistake, generator, randn

F64, F32 = torch.float64, torch.float32


# ---------------------------------------------------------------------------- LayerNorm


def _ln_cases() -> list[Case]:
    g = generator(70)

    def case(*shape, dtype=F64, scale=1.0, shift=0.0):
        d = shape[-1]
        return (randn(g, *shape, dtype=dtype, scale=scale) + shift, randn(g, d, dtype=dtype) + 1, randn(g, d, dtype=dtype))

    const = case(2, 4)
    const = (torch.full((2, 4), 3.0, dtype=F64),) + const[1:]
    return [
        Case("x of 3×5 with random gamma and beta", case(3, 5)),
        Case("x of 2×3×8, float32", case(2, 3, 8, dtype=F32)),
        Case("x of 2×4 with values around 100, spread 5", case(2, 4, scale=5.0, shift=100.0)),
        Case("a constant row (variance 0): the result is beta", const),
        Case("d=1: the result is beta", case(3, 1)),
        Case("eps=0.1 given", case(2, 6, scale=0.3), {"eps": 0.1}),
    ]


def _ln(x, gamma, beta, eps=1e-5, *, correction=0, eps_inside=True, dim=-1):
    mean = x.mean(dim=dim, keepdim=True)
    var = x.var(dim=dim, keepdim=True, correction=correction) if x.shape[dim] > correction else torch.full_like(mean, float("nan"))
    y = (x - mean) / (torch.sqrt(var + eps) if eps_inside else torch.sqrt(var) + eps)
    return y * gamma + beta


LAYER_NORM = Checker(_ln_cases, (
    Mistake("the variance divided by d - 1 (unbiased): LayerNorm uses the mean of squared deviations, ÷ d",
            lambda *a, **k: _ln(*a, **k, correction=1)),
    Mistake("eps was added after the square root instead of inside it: sqrt(var + eps)",
            lambda *a, **k: _ln(*a, **k, eps_inside=False)),
    Mistake("normalised over the wrong axis: LayerNorm works along the last one (dim=-1)",
            lambda x, g, b, eps=1e-5: _ln(x, g, b, eps, dim=0) if x.dim() > 1 and x.shape[0] == x.shape[-1] else None),
    Mistake("gamma and beta were left out", lambda x, g, b, eps=1e-5: _ln(x, torch.ones_like(g), torch.zeros_like(b), eps)),
))


# ---------------------------------------------------------------------------- GELU


def _gelu_cases() -> list[Case]:
    g = generator(80)
    return [
        Case("x of 3×4 around 0", (randn(g, 3, 4),)),
        Case("x of 2×5, float32, spread 3", (randn(g, 2, 5, dtype=F32, scale=3),)),
        Case("zero, large positive and large negative values", (torch.tensor([0.0, 12.0, -12.0, 40.0, -40.0], dtype=F64),)),
        Case("a 2×2×3 batch", (randn(g, 2, 2, 3),)),
    ]


def _gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


GELU = Checker(_gelu_cases, (
    Mistake("the tanh approximation: close, but this kata asks for the exact form x·Φ(x) with erf", _gelu_tanh),
    Mistake("erf(x) where erf(x/√2) was meant: Φ(x) = (1 + erf(x/√2)) / 2",
            lambda x: 0.5 * x * (1 + torch.erf(x))),
    Mistake("x·σ(x) is SiLU (Swish), not GELU; GELU's curve is x·Φ(x)", lambda x: x * torch.sigmoid(x)),
    Mistake("x·σ(1.702x) is the sigmoid approximation of GELU, not the exact form", lambda x: x * torch.sigmoid(1.702 * x)),
))


# ---------------------------------------------------------------------------- cross-entropy


def _ce_cases() -> list[Case]:
    g = generator(90)

    def targets(*shape, v, ignored=0.0):
        t = torch.randint(0, v, shape, generator=g)
        drop = torch.rand(shape, generator=g) < ignored
        return t.masked_fill(drop, -1)

    some = targets(4, 6, v=5, ignored=0.4)
    some[0, 0] = -1
    some[0, 1] = 2
    return [
        Case("logits 4×5 (N=4, V=5), no target ignored", (randn(g, 4, 5), targets(4, v=5))),
        Case("logits 2×3×7 (B=2, T=3, V=7), float32", (randn(g, 2, 3, 7, dtype=F32), targets(2, 3, v=7))),
        Case("logits 4×6×5 with some targets = -1 (ignored)", (randn(g, 4, 6, 5), some)),
        Case("large logits around 1000 (overflow without the max shift)", (randn(g, 3, 4) * 10 + 1000, targets(3, v=4))),
        Case("ignore_index=0 given: targets 0 are ignored", (randn(g, 5, 3), targets(5, v=3)), {"ignore_index": 0}),
        Case("every target ignored: NaN (0 / 0), as torch", (randn(g, 2, 3), torch.full((2,), -1))),
        Case("a batch of one position", (randn(g, 1, 4), targets(1, v=4))),
    ]


def _ce(logits, targets, ignore_index=-1, *, count_ignored=False, shift=True, reduce="mean", axis=-1):
    z = logits - logits.amax(dim=axis, keepdim=True) if shift else logits
    logp = z - z.exp().sum(dim=axis, keepdim=True).log()
    if axis != -1:
        logp = logp.movedim(axis, -1) if logp.dim() > 1 else logp
    kept = targets != ignore_index
    picked = logp.gather(-1, torch.where(kept, targets, 0).unsqueeze(-1)).squeeze(-1) * kept
    if reduce == "sum":
        return -picked.sum()
    return -picked.sum() / (kept.numel() if count_ignored else kept.sum())


CROSS_ENTROPY = Checker(_ce_cases, (
    Mistake("the ignored positions were counted in the mean: divide by the number of kept targets",
            lambda *a, **k: _ce(*a, **k, count_ignored=True)),
    Mistake("exp overflowed: subtract each row's largest logit before exp (log-sum-exp trick)",
            lambda *a, **k: _ce(*a, **k, shift=False)),
    Mistake("summed instead of averaged over the positions", lambda *a, **k: _ce(*a, **k, reduce="sum")),
    Mistake("the log-softmax ran over the wrong axis: over the vocabulary, the last one",
            lambda x, t, ignore_index=-1: _ce(x, t, ignore_index, axis=0) if x.shape[0] == x.shape[-1] else None),
))


# ---------------------------------------------------------------------------- positions


# Angles computed in float32 and cast to the output's dtype (as Hugging Face's rotary code and the
# PyTorch tutorial's table do) are right: they differ from float64 angles by about 1e-7, so the
# float64 cases of these two katas accept that much instead of float64's default 1e-9. Every named
# mistake differs by far more.
ANGLES_IN_FLOAT32 = {"rtol": 1e-5, "atol": 1e-6}


def _pe_cases() -> list[Case]:
    return [
        Case("T=4, d=6", (4, 6)),
        Case("T=10, d=16", (10, 16)),
        Case("T=1, d=4: sin 0 = 0 and cos 0 = 1", (1, 4)),
        Case("d=2: one frequency", (5, 2)),
        Case("base=100, float64", (6, 8), {"base": 100.0, "dtype": F64}),
    ]


def _pe(T, d, base=10000.0, dtype=F32, *, halves=False, exponent="2i", swap=False):
    pos = torch.arange(T, dtype=F64).unsqueeze(1)
    i = torch.arange(d // 2, dtype=F64)
    power = (2 * i if exponent == "2i" else i) / d
    ang = pos / base ** power
    s, c = (ang.cos(), ang.sin()) if swap else (ang.sin(), ang.cos())
    if halves:
        return torch.cat([s, c], dim=1).to(dtype)
    return torch.stack([s, c], dim=-1).reshape(T, d).to(dtype)


SINUSOIDAL_POSITIONS = Checker(_pe_cases, (
    Mistake("sin filled the first half and cos the second: they interleave, sin in even columns, cos in odd",
            lambda *a, **k: _pe(*a, **k, halves=True)),
    Mistake("the exponent used i instead of 2i: the frequency of pair i is 1 / base^(2i/d)",
            lambda *a, **k: _pe(*a, **k, exponent="i")),
    Mistake("cos and sin were swapped: sin goes in the even columns", lambda *a, **k: _pe(*a, **k, swap=True)),
), **ANGLES_IN_FLOAT32)


# ---------------------------------------------------------------------------- RoPE


def _rope_cases() -> list[Case]:
    g = generator(100)
    return [
        Case("x of 4×6 (T=4, d=6)", (randn(g, 4, 6),)),
        Case("x of 2×5×8, float32", (randn(g, 2, 5, 8, dtype=F32),)),
        Case("x of 2×2×3×4 (B, H, T, d)", (randn(g, 2, 2, 3, 4),)),
        Case("T=1: position 0 is not rotated", (randn(g, 1, 4),)),
        Case("base=100", (randn(g, 6, 4),), {"base": 100.0}),
    ]


def _rope(x, base=10000.0, *, pairing="neighbours", sign=1.0, exponent="2i"):
    T, d = x.shape[-2], x.shape[-1]
    idx = torch.arange(0, d, 2, dtype=F64) if exponent == "2i" else torch.arange(d // 2, dtype=F64)
    ang = torch.arange(T, dtype=F64).unsqueeze(1) * base ** (-idx / d) * sign
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    if pairing == "halves":
        a, b = x[..., : d // 2], x[..., d // 2:]
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)


ROPE = Checker(_rope_cases, (
    Mistake("the two halves of the vector were paired (GPT-NeoX style); this kata pairs neighbours (x0, x1), (x2, x3)…",
            lambda *a, **k: _rope(*a, **k, pairing="halves")),
    Mistake("the rotation went clockwise: (a, b) turns to (a·cos - b·sin, a·sin + b·cos)",
            lambda *a, **k: _rope(*a, **k, sign=-1.0)),
    Mistake("θ_i used i instead of 2i in the exponent: θ_i = base^(-2i/d)", lambda *a, **k: _rope(*a, **k, exponent="i")),
), **ANGLES_IN_FLOAT32)


CHECKERS = {
    "layer_norm": LAYER_NORM, "gelu": GELU, "cross_entropy": CROSS_ENTROPY,
    "sinusoidal_positions": SINUSOIDAL_POSITIONS, "rope": ROPE,
}
