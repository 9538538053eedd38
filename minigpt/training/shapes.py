"""Batches of one fixed shape, so a ``torch.compile``d model is compiled once.

Packed name batches change shape every step: 128 names fill 64 or 65 rows, 14 to 16 wide. A
compiled model specialises on the shapes it saw and compiles again for each new one, which on a
busy CPU cost 16-80 s a time (a run's first and second shapes, measured). ``FixedShape`` pads every
batch to the block size and to the first batch's row count plus some headroom, rounded up to
``ROW_MULTIPLE`` (64 or 65 rows → 72): one shape for the run, at the price of ~11% padded rows. A
batch that ever needs more rows raises the count, one more compile.

Padding changes nothing the model learns: padded targets are ignored by the loss, padded
positions belong to no word (segment -1), so they see only earlier padding and no real token
sees them (the mask keeps attention inside each word).
"""

from __future__ import annotations

import torch

from minigpt.data import IGNORE

ROW_MULTIPLE = 8  # rows rounded up to this
HEADROOM = 1 / 16  # rows added to the first batch's before rounding: 64 or 65 rows → 72

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


class FixedShape:
    """Pads a run's batches (x, y, {positions, segments}) to one shape: ``width`` columns and a row
    count set by the first batch (plus ``HEADROOM``, rounded up to ``ROW_MULTIPLE``), raised only
    when a batch needs more. The loss and gradients are those of the batch as it came."""

    def __init__(self, width: int, multiple: int = ROW_MULTIPLE):
        self.width, self.multiple, self.rows = width, multiple, 0

    def __call__(self, x: torch.Tensor, y: torch.Tensor, extra: dict):
        if x.shape[0] > self.rows:
            self.rows = fixed_rows(x.shape[0] + int(x.shape[0] * HEADROOM) + 1, self.multiple)
        rows, width = self.rows, self.width
        return (pad_to(x, rows, width, FILL["x"]), pad_to(y, rows, width, FILL["y"]),
                {k: pad_to(v, rows, width, FILL[k]) for k, v in extra.items()})
