"""How initialization shapes a fresh MiniGPT: the spread of the residual stream and of its
gradient, block by block, measured on the real model at several depths.

Three schemes, all on the same architecture and the same random batch:

- ``gpt2``: what MiniGPT does, weights N(0, 0.02²) and the two projections that write into the
  residual stream (attention's W_O and the FFN's second matrix) at 0.02/√(2L);
- ``no-scaling``: every weight at 0.02, so each of the 2L writes into the stream is as large as
  the first;
- ``std-1``: every weight N(0, 1), the "just use randn" mistake.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from minigpt.models.config import GPTConfig
from minigpt.models.gpt import MiniGPT
from minigpt.training.cpu_policy import one_thread

SCHEMES = ("gpt2", "no-scaling", "std-1")
RESIDUAL_WRITERS = ("attn.proj.weight", "ffn.down.weight")


@dataclass(frozen=True)
class InitStats:
    scheme: str
    n_layers: int
    stream_std: list[float]  # std of the residual stream after each block
    grad_std: list[float]  # std of d(loss)/d(stream) after each block
    initial_loss: float


def build(n_layers: int, scheme: str, seed: int = 0, d_model: int = 64, n_heads: int = 4,
          vocab_size: int = 27, block_size: int = 16) -> MiniGPT:
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")
    torch.manual_seed(seed)
    model = MiniGPT(GPTConfig(vocab_size=vocab_size, block_size=block_size, d_model=d_model,
                              n_heads=n_heads, n_layers=n_layers))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if scheme == "no-scaling" and name.endswith(RESIDUAL_WRITERS):
                nn.init.normal_(p, std=0.02)
            elif scheme == "std-1" and p.dim() >= 2:
                nn.init.normal_(p, std=1.0)
    return model


def residual_writer_std(model: MiniGPT) -> float:
    """Measured std of the attention output projections and FFN down projections together."""
    ws = [p.detach().flatten() for n, p in model.named_parameters() if n.endswith(RESIDUAL_WRITERS)]
    return torch.cat(ws).std().item()


def measure(n_layers: int, scheme: str, seed: int = 0, batch: int = 32) -> InitStats:
    """Forward and backward one random batch; record the stream and its gradient per block."""
    with one_thread():
        return _measure(n_layers, scheme, seed, batch)


def _measure(n_layers: int, scheme: str, seed: int, batch: int) -> InitStats:
    model = build(n_layers, scheme, seed)
    g = torch.Generator().manual_seed(seed + 1)
    idx = torch.randint(0, 27, (batch, 16), generator=g)
    targets = torch.randint(0, 27, (batch, 16), generator=g)
    outputs: list[torch.Tensor] = []

    def keep(_module, _inputs, output):
        stream = output[0]
        stream.retain_grad()
        outputs.append(stream)

    hooks = [block.register_forward_hook(keep) for block in model.blocks]
    try:
        loss = model(idx, targets)[1]
        loss.backward()
    finally:
        for h in hooks:
            h.remove()
    # the loss is a mean over batch·T positions: undo that so the numbers do not depend on size
    positions = batch * 16
    return InitStats(scheme, n_layers,
                     [s.detach().std().item() for s in outputs],
                     [s.grad.std().item() * positions for s in outputs],
                     loss.item())


def uniform_guess_loss(vocab_size: int = 27) -> float:
    """ln V: the loss of a model that gives every character the same probability."""
    return math.log(vocab_size)
