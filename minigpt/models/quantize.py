"""Weight quantization: round-to-nearest int8 / int4 with one scale per tensor, per output channel
or per group of input columns, and the way back (dequantize).

Symmetric and without a zero point, the simplest scheme that is still used: a block of weights
shares one float scale s = max|w| / q_max, each weight is stored as the whole number
q = round(w / s) clamped to [-q_max, q_max] (q_max = 127 for 8 bits, 7 for 4 bits), and read back
as q · s. Rounding to the nearest step is off by at most half a step, so |w - deq(q(w))| ≤ s/2
for every weight: the larger the block's largest |w|, the coarser every other weight in it.
That is why one outlier ruins a per-tensor scale, and why per-channel and group-wise scales,
which give the outlier's neighbours a scale of their own, lose less.

Bytes are counted as stored: b bits per weight (two int4 values to a byte) plus a float32 scale
per block. Biases, norms and anything that is not a 2-D weight stay float32.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch

from minigpt.errors import ConfigError

BITS = (8, 4)
GRANULARITIES = ("tensor", "channel", "group")
SCALE_BYTES = 4  # one float32 per block
FLOAT_BYTES = 4  # what every unquantized value takes


@dataclass(frozen=True)
class QuantConfig:
    bits: int = 8
    granularity: str = "channel"  # tensor | channel (one scale per output row) | group
    group_size: int = 32  # group: consecutive input columns of one row sharing a scale

    def __post_init__(self) -> None:
        if self.bits not in BITS:
            raise ConfigError(f"bits must be one of {', '.join(map(str, BITS))}, got {self.bits!r}")
        if self.granularity not in GRANULARITIES:
            raise ConfigError(f"granularity must be one of {', '.join(GRANULARITIES)}, got {self.granularity!r}")
        if self.granularity == "group" and (isinstance(self.group_size, bool) or not isinstance(self.group_size, int)
                                            or self.group_size < 1):
            raise ConfigError(f"group_size must be a positive whole number, got {self.group_size!r}")

    @property
    def q_max(self) -> int:
        return 2 ** (self.bits - 1) - 1

    @property
    def label(self) -> str:
        where = f"groups of {self.group_size}" if self.granularity == "group" else f"per {self.granularity}"
        return f"int{self.bits} {where}"


@dataclass
class Quantized:
    """A 2-D weight as whole numbers and one scale per block (``scale`` broadcasts over ``q``
    viewed as (rows, blocks per row, block width))."""

    q: torch.Tensor  # int8 values in [-q_max, q_max], shape (rows, blocks, width)
    scale: torch.Tensor  # float32, shape (rows or 1, blocks, 1)
    shape: tuple[int, int]
    config: QuantConfig

    @property
    def n_bytes(self) -> int:
        """Weights at ``bits`` each (rounded up to whole bytes) plus a float32 per scale."""
        return (self.q.numel() * self.config.bits + 7) // 8 + self.scale.numel() * SCALE_BYTES


def _blocks(w: torch.Tensor, cfg: QuantConfig) -> torch.Tensor:
    """w (rows, cols) viewed as (rows or 1, blocks, width): the weights that share one scale."""
    rows, cols = w.shape
    if cfg.granularity == "tensor":
        return w.reshape(1, 1, rows * cols)
    if cfg.granularity == "channel":
        return w.reshape(rows, 1, cols)
    if cols % cfg.group_size:
        raise ConfigError(f"a row of {cols} columns does not split into groups of {cfg.group_size}")
    return w.reshape(rows, cols // cfg.group_size, cfg.group_size)


def quantize(w: torch.Tensor, cfg: QuantConfig) -> Quantized:
    if w.dim() != 2:
        raise ConfigError(f"quantize takes a 2-D weight, got shape {tuple(w.shape)}")
    blocks = _blocks(w.detach().float(), cfg)
    # An all-zero block would divide by 0: any scale represents it exactly, so take 1.
    largest = blocks.abs().amax(dim=-1, keepdim=True)
    scale = torch.where(largest > 0, largest / cfg.q_max, torch.ones_like(largest))
    q = torch.clamp(torch.round(blocks / scale), -cfg.q_max, cfg.q_max).to(torch.int8)
    return Quantized(q, scale, tuple(w.shape), cfg)


def dequantize(qt: Quantized) -> torch.Tensor:
    return (qt.q.float() * qt.scale).reshape(qt.shape)


def round_trip(w: torch.Tensor, cfg: QuantConfig) -> torch.Tensor:
    return dequantize(quantize(w, cfg)).to(w.dtype)


def scale_of_each_weight(qt: Quantized) -> torch.Tensor:
    """The scale every weight was stored with, in w's shape (the error bound is half of it)."""
    return qt.scale.expand_as(qt.q.float()).reshape(qt.shape)


def quantizable(name: str, p: torch.Tensor) -> bool:
    """Which tensors are quantized: every 2-D weight matrix (linear layers and embeddings)."""
    return p.dim() == 2 and name.endswith("weight")


@dataclass
class ModelBytes:
    float_bytes: int  # the whole model in float32
    quant_bytes: int  # quantized matrices + float32 scales + the float32 rest
    n_quantized: int  # weights stored as whole numbers

    @property
    def saved(self) -> int:
        return self.float_bytes - self.quant_bytes

    @property
    def ratio(self) -> float:
        return self.float_bytes / self.quant_bytes


def quantize_model(model: torch.nn.Module, cfg: QuantConfig) -> tuple[torch.nn.Module, ModelBytes]:
    """A copy of ``model`` whose matrices hold their dequantized values (what an int kernel would
    compute with), and the bytes it would take stored quantized. Tied weights count once."""
    out = copy.deepcopy(model)
    float_bytes = quant_bytes = n_quantized = 0
    seen: set[int] = set()
    with torch.no_grad():
        for name, p in out.named_parameters():  # named_parameters skips a tied duplicate
            if id(p) in seen:
                continue
            seen.add(id(p))
            float_bytes += p.numel() * FLOAT_BYTES
            if quantizable(name, p):
                qt = quantize(p, cfg)
                p.copy_(dequantize(qt))
                quant_bytes += qt.n_bytes
                n_quantized += p.numel()
            else:
                quant_bytes += p.numel() * FLOAT_BYTES
    return out, ModelBytes(float_bytes, quant_bytes, n_quantized)
