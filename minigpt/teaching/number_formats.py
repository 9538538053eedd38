"""Low-precision number formats, computed from their bit layouts: FP8 (E4M3, E5M2), the FP4
element of microscaling (E2M1), the power-of-two scale E8M0, QLoRA's NF4 levels, and tensors
rounded to each with a scale per tensor, per block, MX-style or NVFP4-style.

Every figure comes from enumerating a format's bit patterns (``values``), never from a typed
table, so the lesson's ranges are what the decoding rules give:

- FP8 (Micikevicius et al. 2022): E4M3 spends its all-ones exponent on numbers and keeps only
  S.1111.111 for NaN (no infinity), which stretches its top to 448; E5M2 follows IEEE rules
  (all-ones exponent: infinities and NaNs), top 57344.
- OCP Microscaling (MX) v1.0 (2023): a block of 32 elements shares one E8M0 scale, a bare
  power of two; MXFP4's elements are E2M1 (±0, 0.5, 1, 1.5, 2, 3, 4, 6). The shared exponent
  is floor(log2(block max)) − 2, the largest element's exponent, and elements above 6 saturate.
- NVFP4 (NVIDIA's Blackwell format): E2M1 elements in blocks of 16 whose scale is an E4M3
  number, with one float32 per tensor that brings the block scales into E4M3's range.
- NF4 (Dettmers et al. 2023): sixteen levels at quantiles of the standard normal, scaled to
  [−1, 1], with an exact zero; one absolute maximum per block of 64 weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import torch


@dataclass(frozen=True)
class MiniFloat:
    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    specials: str  # "ieee": all-ones exponent is inf/NaN; "nan-only": only all-ones bits are NaN;
    # "none": every pattern is a number

    @property
    def bits(self) -> int:
        return 1 + self.exponent_bits + self.mantissa_bits


E4M3 = MiniFloat("E4M3", 4, 3, 7, "nan-only")
E5M2 = MiniFloat("E5M2", 5, 2, 15, "ieee")
E2M1 = MiniFloat("E2M1", 2, 1, 1, "none")
FP16 = MiniFloat("FP16", 5, 10, 15, "ieee")  # only to check the decoder against torch.finfo
FORMATS = {f.name: f for f in (E4M3, E5M2, E2M1, FP16)}


def decode(fmt: MiniFloat, pattern: int) -> float:
    """The value of one bit pattern (sign, exponent, mantissa), NaN or ±inf where the format
    reserves the pattern."""
    m_bits, e_bits = fmt.mantissa_bits, fmt.exponent_bits
    sign = -1.0 if pattern >> (e_bits + m_bits) & 1 else 1.0
    exponent = pattern >> m_bits & ((1 << e_bits) - 1)
    mantissa = pattern & ((1 << m_bits) - 1)
    top = (1 << e_bits) - 1
    if fmt.specials == "ieee" and exponent == top:
        return sign * math.inf if mantissa == 0 else math.nan
    if fmt.specials == "nan-only" and exponent == top and mantissa == (1 << m_bits) - 1:
        return math.nan
    if exponent == 0:  # subnormal: no hidden 1, the smallest exponent
        return sign * mantissa / (1 << m_bits) * 2.0 ** (1 - fmt.bias)
    return sign * (1 + mantissa / (1 << m_bits)) * 2.0 ** (exponent - fmt.bias)


def values(fmt: MiniFloat) -> list[float]:
    """Every finite value of the format, sorted, each once (+0 and −0 are one)."""
    decoded = (decode(fmt, p) for p in range(1 << fmt.bits))
    return sorted({v for v in decoded if math.isfinite(v)})


@dataclass(frozen=True)
class Range:
    name: str
    largest: float
    smallest_normal: float
    smallest_subnormal: float
    finite_values: int
    binades: float  # log2(largest / smallest subnormal): the span in powers of two


def format_range(fmt: MiniFloat) -> Range:
    finite = values(fmt)
    positive = [v for v in finite if v > 0]
    normal = [v for v in positive if v >= 2.0 ** (1 - fmt.bias)]
    return Range(fmt.name, max(finite), min(normal), min(positive), len(finite),
                 math.log2(max(finite) / min(positive)))


def e8m0_range() -> tuple[float, float]:
    """MX's scale: 8 exponent bits, no sign, no mantissa, bias 127; 0xFF is NaN, so 2^-127 to
    2^127 (0 is a number here, 2^-127, not zero)."""
    return 2.0 ** (0 - 127), 2.0 ** (254 - 127)


def magnitudes(fmt: MiniFloat) -> torch.Tensor:
    return torch.tensor([v for v in values(fmt) if v >= 0], dtype=torch.float64)


def round_to_grid(x: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
    """Each |x| to the nearest value of ``grid`` (sorted magnitudes from 0), ties to the even
    index (the even mantissa), saturating at the top; the sign is kept."""
    a = x.double().abs().clamp(max=float(grid[-1]))
    hi = torch.searchsorted(grid, a).clamp(max=len(grid) - 1)
    lo = (hi - 1).clamp(min=0)
    d_lo, d_hi = a - grid[lo], grid[hi] - a
    take_hi = (d_hi < d_lo) | ((d_hi == d_lo) & (hi % 2 == 0))
    return torch.sign(x.double()) * torch.where(take_hi, grid[hi], grid[lo])


def round_to_format(x: torch.Tensor, fmt: MiniFloat) -> torch.Tensor:
    return round_to_grid(x, magnitudes(fmt))


def _blocks(x: torch.Tensor, block: int | None) -> torch.Tensor:
    """x as (blocks, block): consecutive elements of each row share a scale (None: the tensor)."""
    flat = x.double().reshape(-1, x.shape[-1]) if x.dim() > 1 else x.double().reshape(1, -1)
    if block is None:
        return flat.reshape(1, -1)
    if flat.shape[-1] % block:
        raise ValueError(f"rows of {flat.shape[-1]} do not split into blocks of {block}")
    return flat.reshape(-1, block)


def _amax(b: torch.Tensor) -> torch.Tensor:
    m = b.abs().amax(dim=-1, keepdim=True)
    return torch.where(m > 0, m, torch.ones_like(m))  # an all-zero block is exact at any scale


def scaled_round_trip(x: torch.Tensor, fmt: MiniFloat, block: int | None = None) -> torch.Tensor:
    """x through ``fmt`` with a float32 scale per tensor (block None) or per ``block`` elements,
    set so that the largest magnitude lands on the format's largest value."""
    b = _blocks(x, block)
    scale = _amax(b) / values(fmt)[-1]
    return (round_to_format(b / scale, fmt) * scale).reshape(x.shape).to(x.dtype)


MX_BLOCK, NVFP4_BLOCK = 32, 16


def mx_round_trip(x: torch.Tensor, fmt: MiniFloat = E2M1, block: int = MX_BLOCK) -> torch.Tensor:
    """OCP MX: per block a power-of-two scale 2^(floor(log2 amax) − e_max), e_max the exponent
    of the element format's largest value (2 for E2M1's 6); elements round and saturate."""
    b = _blocks(x, block)
    e_max = math.floor(math.log2(values(fmt)[-1]))
    low, high = e8m0_range()
    scale = torch.exp2(torch.floor(torch.log2(_amax(b))) - e_max).clamp(low, high)
    return (round_to_format(b / scale, fmt) * scale).reshape(x.shape).to(x.dtype)


def nvfp4_round_trip(x: torch.Tensor, block: int = NVFP4_BLOCK) -> torch.Tensor:
    """NVFP4: E2M1 elements, a block scale amax/6 stored in E4M3 after dividing by one float32
    per tensor, amax_tensor / (448 · 6), which puts the largest block scale at E4M3's top."""
    b = _blocks(x, block)
    fp4_top, fp8_top = values(E2M1)[-1], values(E4M3)[-1]
    per_tensor = float(_amax(b.reshape(1, -1))) / (fp8_top * fp4_top)
    block_scale = round_to_format(_amax(b) / fp4_top / per_tensor, E4M3) * per_tensor
    block_scale = torch.where(block_scale > 0, block_scale, torch.ones_like(block_scale))
    return (round_to_format(b / block_scale, E2M1) * block_scale).reshape(x.shape).to(x.dtype)


# --- NF4 ---------------------------------------------------------------------------------------

NF4_BLOCK = 64


def nf4_offset() -> float:
    """The outermost quantile's probability: halfway between 1 − 1/(2·15) and 1 − 1/(2·16), so
    the end levels are finite (the normal's 0 and 1 quantiles are ∓∞)."""
    return ((1 - 1 / (2 * 15)) + (1 - 1 / (2 * 16))) / 2


def _linspace(a: float, b: float, n: int) -> list[float]:
    return [a + (b - a) * i / (n - 1) for i in range(n)]


def nf4_levels() -> list[float]:
    """QLoRA's 16 levels: 8 positive quantiles of N(0, 1) at probabilities evenly spaced from
    the offset down to 1/2 (1/2 itself dropped), 7 negative ones the same way, and 0; divided by
    the largest so they span [−1, 1]."""
    normal, top = NormalDist(), nf4_offset()
    positive = [normal.inv_cdf(p) for p in _linspace(top, 0.5, 9)[:-1]]
    negative = [-normal.inv_cdf(p) for p in _linspace(top, 0.5, 8)[:-1]]
    levels = sorted(positive + negative + [0.0])
    return [v / max(levels) for v in levels]


def nf4_round_trip(x: torch.Tensor, block: int = NF4_BLOCK) -> torch.Tensor:
    """Each block divided by its absolute maximum and every value snapped to the nearest level."""
    b = _blocks(x, block)
    m = _amax(b)
    levels = torch.tensor(nf4_levels(), dtype=torch.float64)
    nearest = (b / m).unsqueeze(-1).sub(levels).abs().argmin(dim=-1)
    return (levels[nearest] * m).reshape(x.shape).to(x.dtype)


def int_round_trip(x: torch.Tensor, bits: int, block: int | None = None) -> torch.Tensor:
    """Symmetric integers ±(2^(bits−1) − 1) with an absmax scale, as minigpt.models.quantize stores int8/int4."""
    b = _blocks(x, block)
    q_max = 2 ** (bits - 1) - 1
    scale = _amax(b) / q_max
    return (torch.round(b / scale).clamp(-q_max, q_max) * scale).reshape(x.shape).to(x.dtype)


def relative_error(x: torch.Tensor, approx: torch.Tensor) -> float:
    """‖x − approx‖ / ‖x‖: the share of the tensor's size the rounding lost."""
    return float((x.double() - approx.double()).norm() / x.double().norm())


def bits_per_value(element_bits: int, block: int | None, scale_bits: int, n: int,
                   tensor_scale_bits: int = 0) -> float:
    """Storage per element: its bits, a block scale shared by ``block`` elements (None: one per
    tensor of ``n``), plus any one-per-tensor scale."""
    shared = scale_bits / (block if block else n)
    return element_bits + shared + tensor_scale_bits / n


# --- SmoothQuant -------------------------------------------------------------------------------


def smoothing_factors(x: torch.Tensor, w: torch.Tensor, alpha: float) -> torch.Tensor:
    """SmoothQuant's s_j = max|X_j|^α / max|W_j|^(1−α) per input channel j (x: tokens × in,
    w: out × in); X/s and W·s give the same product, with α of the range moved onto W."""
    act = x.abs().amax(dim=0)
    weight = w.abs().amax(dim=0)
    return act.pow(alpha) / weight.pow(1 - alpha)


def int8_product_error(x: torch.Tensor, w: torch.Tensor) -> float:
    """Relative error of x·wᵀ when x (one scale per tensor) and w (one per output row) are int8."""
    xq = int_round_trip(x, 8)
    wq = torch.stack([int_round_trip(row, 8) for row in w])
    return relative_error(x @ w.T, xq @ wq.T)
