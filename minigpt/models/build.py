"""Build a model of any of the three kinds the tutor compares, and count its parameters.

All three share ``forward(idx, targets) -> (logits, loss)``.
"""

from __future__ import annotations

from minigpt.errors import ConfigError
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


# The largest model the tutor builds, trains or loads (the form, `minigpt train` and checkpoint
# loading all refuse more): ~200 MB of float32 weights, far beyond what its lessons need.
MAX_PARAMS = 50_000_000


def planned_size(kind: str, config) -> tuple[int, int]:
    """(parameters, tensor elements including buffers) of the model ``config`` describes,
    measured on torch's "meta" device: shapes only, nothing allocated. Lets a caller refuse a
    model too large before building it."""
    import sys

    import torch

    try:
        with torch.device("meta"):
            model = build_model(kind, config)
    except (RuntimeError, OverflowError) as e:
        if "overflow" in str(e).lower() or isinstance(e, OverflowError):
            return sys.maxsize, sys.maxsize  # shapes beyond what torch can describe: beyond any limit
        raise ConfigError(f"this model cannot be built: {e}") from None
    elements = sum(t.numel() for t in model.parameters()) + sum(b.numel() for b in model.buffers())
    return count_parameters(model), elements


def count_text(n: int) -> str:
    """A planned size for a message: 38,660,407,296, or words when torch could not even describe the shapes."""
    import sys

    return "too many to count" if n >= sys.maxsize else f"{n:,}"
