"""Number formats and memory for training: what float32, bfloat16 and float16 can hold, why a
loss is kept in float32, loss scaling for float16, gradient accumulation, and optimizer state.

Every figure comes from torch itself (``torch.finfo`` and real roundings), so the lesson shows
what the hardware formats really do rather than a table typed from memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# sign, exponent and mantissa bits of each format
LAYOUT = {"float32": (1, 8, 23), "bfloat16": (1, 8, 7), "float16": (1, 5, 10)}
# float16's smallest subnormal is 2^-24; anything below half of it rounds to 0
FLOAT16_ZERO_BELOW = 2.0 ** -25


@dataclass(frozen=True)
class FormatInfo:
    name: str
    bits: tuple[int, int, int]
    largest: float
    smallest_normal: float
    epsilon: float  # gap between 1 and the next larger number


def format_info(name: str) -> FormatInfo:
    fi = torch.finfo(DTYPES[name])
    return FormatInfo(name, LAYOUT[name], fi.max, fi.tiny, fi.eps)


def stored_as(value: float, name: str) -> float:
    """The number a format really stores for ``value`` (round to nearest even)."""
    return torch.tensor(value, dtype=torch.float64).to(DTYPES[name]).double().item()


def running_sum(step: float, n: int, name: str) -> float:
    """Add ``step`` to an accumulator n times, rounding to the format after every addition."""
    dtype = DTYPES[name]
    total = torch.zeros((), dtype=dtype)
    inc = torch.tensor(step, dtype=dtype)
    for _ in range(n):
        total = total + inc
    return total.double().item()


def scaled_gradient(grad: float, scale: float, name: str = "float16") -> tuple[float, float]:
    """A tiny gradient stored in ``name`` as it is, and after multiplying the loss by ``scale``
    (then divided back in float32): loss scaling keeps small gradients from flushing to zero."""
    plain = stored_as(grad, name)
    scaled = torch.tensor(grad * scale, dtype=torch.float64).to(DTYPES[name])
    return plain, (scaled.float() / scale).double().item()


def accumulated_gradients(model: torch.nn.Module, loss_fn, x: torch.Tensor, y: torch.Tensor,
                          micro_batches: int) -> list[torch.Tensor]:
    """Gradients of the mean loss over (x, y) computed in ``micro_batches`` pieces.

    Each piece's mean loss is weighted by its share of the rows before ``backward``, and the
    gradients add up in ``.grad``: the result is the gradient of the whole batch's mean loss.
    """
    model.zero_grad()
    for xs, ys in zip(x.tensor_split(micro_batches), y.tensor_split(micro_batches)):
        (loss_fn(model(xs), ys) * (len(xs) / len(x))).backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    return grads


# Bytes per parameter while training with AdamW.
TRAINING_BYTES = {
    # weights, gradients, Adam's two running averages (m and v): all float32
    "float32": {"weights": 4, "gradients": 4, "adam m": 4, "adam v": 4},
    # bf16 weights and gradients for the maths, plus a float32 master copy the optimizer updates
    "mixed bf16": {"weights": 2, "gradients": 2, "fp32 master": 4, "adam m": 4, "adam v": 4},
}


def training_bytes(n_params: int, recipe: str) -> dict[str, int]:
    """Bytes of each kind of state for n_params parameters (activations not included)."""
    return {k: v * n_params for k, v in TRAINING_BYTES[recipe].items()}
