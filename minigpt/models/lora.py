"""LoRA (low-rank adaptation): fine-tune a frozen linear layer through a small trainable update.

A frozen weight W (out × in) gets the update ΔW = (α / r) · B·A with A (r × in) and B (out × r),
r much smaller than in and out. A starts random and B at zero, so at the start the adapted layer
computes exactly what the base layer did; training moves only A and B, r·(in + out) numbers
instead of out·in. Afterwards ΔW can be added into W once ("merging"): the merged layer is an
ordinary ``nn.Linear`` again, with no extra cost per token.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from minigpt.errors import ConfigError


class LoRALinear(nn.Module):
    """``base(x) + (α/r) · x Aᵀ Bᵀ``, with ``base`` frozen."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float):
        super().__init__()
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            raise ConfigError(f"LoRA rank must be a positive whole number, got {rank!r}")
        if not alpha > 0:
            raise ConfigError(f"LoRA alpha must be > 0, got {alpha!r}")
        self.base, self.rank, self.alpha = base, rank, float(alpha)
        for p in base.parameters():
            p.requires_grad_(False)
        self.A = nn.Parameter(torch.empty(rank, base.in_features))
        self.B = nn.Parameter(torch.zeros(base.out_features, rank))
        nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))  # what nn.Linear does to its own weight

    @property
    def scaling(self) -> float:
        return self.alpha / self.rank

    def delta(self) -> torch.Tensor:
        """ΔW = (α/r)·B·A, the update the adapter adds to the base weight."""
        return self.scaling * (self.B @ self.A)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + self.scaling * ((x @ self.A.t()) @ self.B.t())

    def merged(self) -> nn.Linear:
        out = nn.Linear(self.base.in_features, self.base.out_features, bias=self.base.bias is not None)
        with torch.no_grad():
            out.weight.copy_(self.base.weight + self.delta())
            if self.base.bias is not None:
                out.bias.copy_(self.base.bias)
        return out


def _targets(model: nn.Module, names: tuple[str, ...]) -> list[tuple[nn.Module, str, nn.Linear]]:
    """(parent, attribute, layer) of every nn.Linear whose attribute name is in ``names``."""
    found = []
    for parent in model.modules():
        for attr, child in parent.named_children():
            if isinstance(child, nn.Linear) and attr in names:
                found.append((parent, attr, child))
    return found


# The Transformer blocks' linear layers in MiniGPT: attention's fused QKV and output projection,
# the feed-forward's two layers. The output head and embeddings stay frozen, as is usual.
DEFAULT_TARGETS = ("qkv", "proj", "up", "down")


def add_lora(model: nn.Module, rank: int, alpha: float, targets: tuple[str, ...] = DEFAULT_TARGETS) -> int:
    """Freeze every parameter of ``model`` and wrap its target linear layers in LoRALinear, in
    place. Returns how many layers were wrapped."""
    for p in model.parameters():
        p.requires_grad_(False)
    found = _targets(model, targets)
    if not found:
        raise ConfigError(f"no linear layer called {', '.join(targets)} to adapt")
    for parent, attr, layer in found:
        setattr(parent, attr, LoRALinear(layer, rank, alpha))
    return len(found)


def merge_lora(model: nn.Module) -> nn.Module:
    """Replace every LoRALinear by its merged nn.Linear, in place; returns the model."""
    for parent in list(model.modules()):
        for attr, child in list(parent.named_children()):
            if isinstance(child, LoRALinear):
                setattr(parent, attr, child.merged())
    return model


def trainable_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def lora_parameter_count(model: nn.Module, rank: int, targets: tuple[str, ...] = DEFAULT_TARGETS) -> int:
    """r·(in + out) per adapted layer, counted from the layers' shapes before any wrapping."""
    return sum(rank * (layer.in_features + layer.out_features) for _, _, layer in _targets(model, targets))
