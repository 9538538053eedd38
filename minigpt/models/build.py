"""Build a model of any of the three kinds the tutor compares, and count its parameters.

All three share ``forward(idx, targets) -> (logits, loss)``.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch.overrides import TorchFunctionMode

from minigpt.errors import ConfigError
from minigpt.models.bigram import Bigram
from minigpt.models.config import MAX_LAYERS
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


# The largest model the tutor trains: ~200 MB of float32 weights, far beyond what its lessons
# need. A checkpoint made elsewhere is only loaded (sampled, inspected), never trained: its cap is
# MAX_LOAD_PARAMS, room for GPT-2 small (124 M, 163 M with an untied head), and the memory free
# now. The one size rule, check_model_size, applies them to every model kind; the form,
# `minigpt train` and the checkpoint reader all call it (tests/test_architecture.py keeps it one).
MAX_PARAMS = 50_000_000
MAX_LOAD_PARAMS = 200_000_000
LOAD_COPIES = 2  # a load holds the weights file's tensors and the model's, float32 each


def check_model_size(kind: str, config, *, verb: str = "trains", field: str | None = None) -> int:
    """The model's parameter count, or a ConfigError (``field`` set) when it is larger than the
    tutor ``verb`` ("trains", or "loads": the inference cap and this machine's free memory).
    Counted from the config alone: nothing is built or allocated to find out."""
    if kind == "gpt" and config.n_layers > MAX_LAYERS:
        raise ConfigError(f"this {kind} would have {config.n_layers:,} layers: more than this tutor {verb} "
                          f"(at most {MAX_LAYERS})", field=field)
    n_params, elements = planned_size(kind, config)
    cap = MAX_LOAD_PARAMS if verb == "loads" else MAX_PARAMS
    if n_params > cap or elements > 2 * cap:
        raise ConfigError(f"this {kind} would have {count_text(n_params)} parameters: more than this tutor "
                          f"{verb} (at most {cap:,})", field=field)
    free = free_memory_bytes()
    if verb == "loads" and free is not None and LOAD_COPIES * 4 * elements > free:
        raise ConfigError(f"loading this {kind} ({n_params:,} parameters) would take about "
                          f"{LOAD_COPIES * 4 * elements / 2**30:,.1f} GiB, more than the {free / 2**30:,.1f} GiB "
                          f"free here", field=field)
    return n_params


def free_memory_bytes() -> int | None:
    """Memory this machine can give now (psutil: Linux's MemAvailable, macOS's free and inactive
    pages); None when unknown."""
    import psutil

    try:
        return int(psutil.virtual_memory().available)
    except (psutil.Error, OSError, RuntimeError):  # RuntimeError: a /proc/meminfo psutil cannot parse
        return None


# An evaluation reads EVAL_ROWS rows at a time, fewer when their float32 logits would pass
# EVAL_LOGITS_BYTES (minigpt.training.schedule.eval_rows): the estimate below counts that batch.
EVAL_ROWS = 1024
EVAL_LOGITS_BYTES = 64 * 2**20

# What a training process holds beyond an `import torch`, whatever its model: the libraries it loads
# on first use (the optimizer, safetensors, the command line), thread pools and the allocator's
# slack. Measured: 240 MB for the course's names run on Linux (benchmarks/bench_memory.py).
RUNTIME_BYTES = 256 * 2**20


def training_memory_bytes(kind: str, config, batch_size: int, n_params: int,
                          tokens_per_item: float | None = None) -> int:
    """A generous estimate of the memory a training run holds above an `import torch`, in bytes:
    RUNTIME_BYTES; the float32 weights with their gradients, AdamW's two moments and the weight
    average (five copies); and the larger of one step's activations (per token and layer about
    17·d values plus the attention's scores, 3·heads·T, as in Korthikanti et al. 2022, and five
    logit-sized tensors: the logits, their log-softmax, both gradients, a float32 copy) and one
    evaluation batch (its logits and their log-softmax, at most EVAL_LOGITS_BYTES each).
    ``tokens_per_item``: the positions an item fills (a name is short; default the block size)."""
    weights = 5 * 4 * n_params
    if kind == "bigram":  # counted in one pass: no batches, no optimizer
        return RUNTIME_BYTES + 2 * 4 * n_params
    V = config.vocab_size
    tokens = batch_size * min(config.block_size, tokens_per_item or config.block_size)
    if kind == "gpt":
        d, heads, layers = config.d_model, config.n_heads, config.n_layers
        per_token = layers * (17 * d + 3 * heads * config.block_size) + 4 * d + 5 * V
    else:  # the MLP: a window of embeddings, the hidden layer (kept twice) and the logits
        per_token = config.context * config.n_embd + 3 * config.n_hidden + 5 * V
    eval_logits = min(EVAL_LOGITS_BYTES, 4 * EVAL_ROWS * config.block_size * V)
    return RUNTIME_BYTES + weights + max(4 * tokens * per_token, 2 * eval_logits)


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
    """(parameters, tensor elements including buffers) of the model ``config`` describes, counted
    by arithmetic from its shapes (no module is built: a million layers are refused in
    microseconds). tests/hostile/test_claimed_sizes.py checks it against the built models."""
    if kind == "bigram":
        return config.vocab_size ** 2, config.vocab_size ** 2  # the count table is the model
    if kind == "mlp":
        V, e, h = config.vocab_size, config.n_embd, config.n_hidden
        n = V * e + config.context * e * h + h + h * V + V
        return n, n
    if kind != "gpt":
        raise ValueError(f"unknown model {kind!r}; expected one of {', '.join(MODELS)}")
    return _gpt_size(config)


def _gpt_size(c) -> tuple[int, int]:
    d, V, T, L, b = c.d_model, c.vocab_size, c.block_size, c.n_layers, int(c.bias)
    norm = d + d * b if c.norm == "layernorm" else d
    kv = c.kv_dim
    layer = norm + d * (d + 2 * kv) + (d + 2 * kv) * b + d * d + d * b  # ln1, fused qkv, proj
    layer += 2 * c.head_dim if c.qk_norm else 0
    if not c.attention_only:
        up = (2 if c.ffn == "swiglu" else 1) * c.ffn_hidden
        layer += norm + d * up + up * b + c.ffn_hidden * d + d * b  # ln2, up, down
    n = V * d + L * layer + norm + (0 if c.tie_weights else d * V)
    n += T * d if c.pos_encoding == "learned" else 0
    n += ((V + 1) * V * d + L) if c.bigram == "residual" else V * V if c.bigram == "logits" else 0
    n += (d + 1 if c.smear else 0) + (L if c.x0_shortcut else 0) + (L if c.value_residual else 0)
    n += d * V if c.mtp_weight > 0 else 0
    buffers = T * d if c.pos_encoding == "sinusoidal" else T * c.head_dim if c.pos_encoding == "rope" else 0
    return n, n + buffers


def count_text(n: int) -> str:
    """A planned size for a message: 38,660,407,296, or words when torch could not even describe the shapes."""
    import sys

    return "too many to count" if n >= sys.maxsize else f"{n:,}"
