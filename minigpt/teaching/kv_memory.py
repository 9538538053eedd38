"""How much memory a KV cache takes: bytes per token = 2 · L · n_kv_heads · head_dim · bytes.

Two tensors (K and V) per layer, each holding one head_dim vector per key/value head for every
token. Multi-query attention keeps one key/value head, grouped-query attention a few, plain
multi-head attention one per query head. The shapes below are the published configurations.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CacheShape:
    name: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    bytes_per_value: int  # 2 for float16/bfloat16, 4 for float32
    context: int  # the context length the model was trained for

    @property
    def attention(self) -> str:
        if self.n_kv_heads == self.n_heads:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"


def bytes_per_token(n_layers: int, n_kv_heads: int, head_dim: int, bytes_per_value: int) -> int:
    return 2 * n_layers * n_kv_heads * head_dim * bytes_per_value


def shape_bytes_per_token(s: CacheShape) -> int:
    return bytes_per_token(s.n_layers, s.n_kv_heads, s.head_dim, s.bytes_per_value)


def cache_bytes(s: CacheShape, tokens: int, batch: int = 1) -> int:
    return shape_bytes_per_token(s) * tokens * batch


def our_model() -> CacheShape:
    """The shipped MiniGPT's cache shape, read from its checkpoint; trained and run in float32."""
    from minigpt.teaching.shipped import shipped_model

    c = shipped_model().config
    return CacheShape("our MiniGPT", c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, 4, c.block_size)


MODELS = (  # other models' published shapes; ``our_model()`` goes first in the tables
    CacheShape("GPT-2 small", 12, 12, 12, 64, 2, 1024),
    CacheShape("LLaMA-2 7B", 32, 32, 32, 128, 2, 4096),
    CacheShape("LLaMA-2 70B", 80, 64, 8, 128, 2, 4096),
)
# The 70B model as it would be without grouping: what GQA saves.
LLAMA2_70B_IF_MHA = CacheShape("70B if MHA", 80, 64, 64, 128, 2, 4096)


def human_bytes(n: float) -> str:
    """Binary units: 1 KiB = 1024 bytes."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" or n >= 100 else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def measured_cache_bytes(model, tokens: int, batch: int = 1) -> int:
    """Run a real MiniGPT over ``tokens`` positions with a cache and add up what it stored."""
    import torch

    cache = model.new_cache()
    idx = torch.zeros(batch, tokens, dtype=torch.long)
    with torch.no_grad():
        model(idx, cache=cache, start=0)
    return sum(t.numel() * t.element_size() for layer in cache for t in layer)
