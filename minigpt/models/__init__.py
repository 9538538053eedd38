"""The three models the tutor compares. All share forward(idx, targets) -> (logits, loss)."""

from __future__ import annotations

from minigpt.config import MODEL_CONFIGS, BigramConfig, GPTConfig, MLPConfig
from minigpt.models.bigram import Bigram
from minigpt.models.gpt import MiniGPT
from minigpt.models.mlp import MLP

MODELS = {"gpt": MiniGPT, "mlp": MLP, "bigram": Bigram}
MODEL_LABELS = {"gpt": "MiniGPT", "mlp": "MLP", "bigram": "Bigram"}


def build_model(kind: str, config):
    if kind not in MODELS:
        raise ValueError(f"unknown model {kind!r}; expected one of {', '.join(MODELS)}")
    return MODELS[kind](config)


def count_parameters(model) -> int:
    """Trainable parameters, counting a tied weight once; the bigram's table counts as its size."""
    if model.kind == "bigram":
        return model.counts.numel()
    return sum(p.numel() for p in model.parameters())


__all__ = ["Bigram", "BigramConfig", "GPTConfig", "MLP", "MLPConfig", "MODEL_CONFIGS", "MODELS",
           "MODEL_LABELS", "MiniGPT", "build_model", "count_parameters"]
