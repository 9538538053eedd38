"""μP, the maximal update parametrization (Yang et al. 2022, Tensor Programs V), for Adam.

Under the standard parametrization (SP) a wider model takes larger steps in its function for the
same learning rate: an Adam update moves every entry of a weight matrix by about lr, and a row
of d such moves adds up coherently, so the change of each output grows with d. The best learning
rate then falls as the model widens and has to be searched again. μP gives each kind of parameter
its own rule, with the width multiplier m = d_model / base width:

- hidden matrices (inside the blocks: fan-in and fan-out both grow with the width): initial
  standard deviation × 1/√m, Adam learning rate × 1/m;
- the output head: logits × 1/m, and the head starts at zero (the readout's own initial values
  would otherwise shrink the signal as 1/m; zero is what the paper recommends and needs no rule);
- embeddings, norms and biases: unchanged;
- attention scores: q·k / head_dim instead of / √head_dim (GPTConfig.attention_scale).

Every rule is 1 at m = 1: at the base width (MUP_BASE_WIDTH, the course's 64) μP builds the SP
model with a zero head, and the two part only as the model grows. The learning-rate rule lives
with the optimizer (``lr_multiplier``, read by ``minigpt.training.schedule.make_optimizer``).
"""

from __future__ import annotations

import math

from torch import nn


def is_hidden_matrix(name: str, p: nn.Parameter) -> bool:
    """A matrix inside a block (attention's q/k/v and output, the feed-forward's two): both of its
    dimensions grow with the width."""
    return p.dim() == 2 and name.startswith("blocks.")


def lr_multiplier(name: str, p: nn.Parameter, cfg) -> float:
    """What Adam's learning rate is multiplied by for this parameter: 1/m for hidden matrices."""
    if cfg.parametrization != "mup" or not is_hidden_matrix(name, p):
        return 1.0
    return 1.0 / cfg.width_multiplier


def output_multiplier(cfg) -> float:
    """The logits' factor, 1/m (1 under SP)."""
    return 1.0 / cfg.width_multiplier


def apply_init(model: nn.Module, cfg) -> None:
    """After SP's init: shrink the hidden matrices by 1/√m and zero the output heads."""
    if cfg.parametrization != "mup":
        return
    shrink = 1.0 / math.sqrt(cfg.width_multiplier)
    for name, p in model.named_parameters():
        if is_hidden_matrix(name, p):
            p.data.mul_(shrink)
    for head in (model.head, getattr(model, "mtp_head", None)):
        if head is not None:
            nn.init.zeros_(head.weight)
