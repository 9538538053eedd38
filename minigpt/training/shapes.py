"""Batches of a few fixed shapes, so a ``torch.compile``d model is compiled once per shape.

Packed name batches change shape every step: 128 names fill 64 or 65 rows, 14 to 16 wide. A
compiled model specialises on the shapes it saw and compiles again for each new one, which on a
CPU costs tens of seconds a time. Padded to the block size and to a row count rounded up to
``ROW_MULTIPLE``, the batches of one run take one or two shapes.

Padding changes nothing the model learns: padded targets are ignored by the loss, padded
positions belong to no word (segment -1), so they see only earlier padding and no real token
sees them (the mask keeps attention inside each word).
"""

from __future__ import annotations

import torch

from minigpt.data import IGNORE

ROW_MULTIPLE = 8  # rows rounded up to this: 128 names (64-65 rows) → 64 or 72

# What each tensor of a batch is padded with: the input id 0, an ignored target, position 0, no word.
FILL = {"x": 0, "y": IGNORE, "positions": 0, "segments": -1}


def fixed_rows(rows: int, multiple: int = ROW_MULTIPLE) -> int:
    return -(-rows // multiple) * multiple


def pad_to(t: torch.Tensor, rows: int, width: int, fill: int) -> torch.Tensor:
    if t.shape == (rows, width):
        return t
    out = torch.full((rows, width), fill, dtype=t.dtype)
    out[: t.shape[0], : t.shape[1]] = t
    return out


def fixed_shape(x: torch.Tensor, y: torch.Tensor, extra: dict, width: int, multiple: int = ROW_MULTIPLE):
    """A batch (x, y, {positions, segments}) padded to ``width`` columns and a row count that is a
    multiple of ``multiple``; the same loss and gradients as the batch as it came."""
    rows = fixed_rows(x.shape[0], multiple)
    return (pad_to(x, rows, width, FILL["x"]), pad_to(y, rows, width, FILL["y"]),
            {k: pad_to(v, rows, width, FILL[k]) for k, v in extra.items()})
