"""Build a model of any of the three kinds the tutor compares, and count its parameters.

All three share ``forward(idx, targets) -> (logits, loss)``.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch.overrides import TorchFunctionMode

from minigpt.errors import ConfigError
from minigpt.models.bigram import Bigram
from minigpt.models.gpt import MiniGPT
from minigpt.models.mlp import MLP

MODELS = {"gpt": MiniGPT, "mlp": MLP, "bigram": Bigram}
_INITIALISERS = {torch.nn.init.normal_, torch.nn.init.trunc_normal_, torch.Tensor.normal_}


def build_model(kind: str, config):
    if kind not in MODELS:
        raise ValueError(f"unknown model {kind!r}; expected one of {', '.join(MODELS)}")
    return MODELS[kind](config)


def count_parameters(model) -> int:
    """Trainable parameters, counting a tied weight once; the bigram's table counts as its size."""
    if model.kind == "bigram":
        return model.counts.numel()
    return sum(p.numel() for p in model.parameters())


# The largest model the tutor builds, trains or loads: ~200 MB of float32 weights, far beyond what
# its lessons need. The one size rule, check_model_size, applies it to every model kind; the form,
# `minigpt train` and the checkpoint reader all call it (tests/test_architecture.py keeps it one).
MAX_PARAMS = 50_000_000


def check_model_size(kind: str, config, *, verb: str = "trains", field: str | None = None) -> int:
    """The model's parameter count, or a ConfigError (``field`` set) when it is larger than the
    tutor ``verb``: measured on the meta device, so nothing is allocated to find out."""
    n_params, elements = planned_size(kind, config)
    if n_params > MAX_PARAMS or elements > 2 * MAX_PARAMS:
        raise ConfigError(f"this {kind} would have {count_text(n_params)} parameters: more than this tutor "
                          f"{verb} (at most {MAX_PARAMS:,})", field=field)
    return n_params


def training_memory_bytes(kind: str, config, batch_size: int, n_params: int,
                          tokens_per_item: float | None = None) -> int:
    """A generous estimate of the memory one training step holds, in bytes: the float32 weights
    with their gradients, AdamW's two moments and the weight average (five copies), and the
    activations kept for the backward pass (per token and layer about 17·d values plus the
    attention's scores, 3·heads·T, as in Korthikanti et al. 2022, and the logits three times).
    ``tokens_per_item``: the positions an item fills (a name is short; default the block size)."""
    weights = 5 * 4 * n_params
    if kind == "bigram":  # counted in one pass: no batches, no optimizer
        return 2 * 4 * n_params
    tokens = batch_size * min(config.block_size, tokens_per_item or config.block_size)
    if kind == "gpt":
        d, heads, layers = config.d_model, config.n_heads, config.n_layers
        per_token = layers * (17 * d + 3 * heads * config.block_size) + 4 * d + 3 * config.vocab_size
    else:  # the MLP: a window of embeddings, the hidden layer (kept twice) and the logits
        per_token = config.context * config.n_embd + 3 * config.n_hidden + 3 * config.vocab_size
    return weights + 4 * tokens * per_token


@contextmanager
def on_meta_device():
    """Build models on torch's "meta" device: shapes only, nothing allocated, and no weight
    initialisation. torch has no meta kernel for ``normal_`` (nn.Embedding's and our own init):
    its first call there goes through torch's Python reference ops, which import the compiler
    stack (torch._dynamo), 2-4 s of a CLI command's or the app's first checkpoint load."""
    with torch.device("meta"), _InitSkippedOnMeta():
        yield


class _InitSkippedOnMeta(TorchFunctionMode):
    """Random initialisation of a meta tensor returns the tensor: there are no values to fill.
    (A torch function mode is per thread: a model built on another thread meanwhile is untouched.)"""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _INITIALISERS:
            tensor = args[0] if args else kwargs.get("tensor")  # nn.init passes it by name
            if getattr(tensor, "is_meta", False):
                return tensor
        return func(*args, **kwargs)


def planned_size(kind: str, config) -> tuple[int, int]:
    """(parameters, tensor elements including buffers) of the model ``config`` describes,
    measured on torch's "meta" device: shapes only, nothing allocated. Lets a caller refuse a
    model too large before building it."""
    import sys

    try:
        with on_meta_device():
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
