"""Build a model of any of the three kinds the tutor compares, and count its parameters.

All three share ``forward(idx, targets) -> (logits, loss)``.
"""

from __future__ import annotations

from minigpt.models.bigram import Bigram
from minigpt.models.gpt import MiniGPT
from minigpt.models.mlp import MLP

MODELS = {"gpt": MiniGPT, "mlp": MLP, "bigram": Bigram}


def build_model(kind: str, config):
    if kind not in MODELS:
        raise ValueError(f"unknown model {kind!r}; expected one of {', '.join(MODELS)}")
    return MODELS[kind](config)


def count_parameters(model) -> int:
    """Trainable parameters, counting a tied weight once; the bigram's table counts as its size."""
    if model.kind == "bigram":
        return model.counts.numel()
    return sum(p.numel() for p in model.parameters())
