"""Attention variants that shrink the KV cache: a sliding window kept in a rolling buffer,
attention sinks, and multi-head latent attention (MLA), against MHA, MQA and GQA.

- A sliding window of W tokens (Mistral 7B: Jiang et al. 2023, W = 4,096) lets each token attend
  to the last W only, so the cache never holds more than W positions: token t is written to slot
  t mod W of a rolling buffer, over the token W places before it.
- StreamingLLM (Xiao et al. 2023) found that a window that has evicted the first tokens breaks
  down, because models park a lot of attention on them; keeping a few "sink" tokens (4 in the
  paper) besides the window restores it. The cache then holds at most sinks + W positions.
- MLA (DeepSeek-V2, 2024) caches, per layer and token, one compressed latent vector of d_c
  numbers, from which every head's keys and values are rebuilt, plus one shared rotary key part
  of d_rope numbers: d_c + d_rope numbers instead of MHA's 2·n_heads·head_dim.
"""

from __future__ import annotations

from dataclasses import dataclass


def window_positions(t: int, window: int, sinks: int = 0) -> list[int]:
    """The positions in the cache after ``t`` tokens (0 … t−1): the first ``sinks`` ones, kept
    for good, and the last ``window`` ones."""
    recent = range(max(0, t - window), t)
    return sorted(set(range(min(sinks, t))) | set(recent))


def rolling_slots(t: int, window: int) -> list[int | None]:
    """The rolling buffer after ``t`` tokens: which position each of the W slots holds."""
    slots: list[int | None] = [None] * window
    for pos in range(t):
        slots[pos % window] = pos
    return slots


def cached_tokens(t: int, window: int | None = None, sinks: int = 0) -> int:
    """How many positions a cache holds after t tokens: all of them, or sinks + the window."""
    if window is None:
        return t
    return min(t, sinks + window) if t > sinks else t


# --- numbers cached per token and layer --------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    name: str
    numbers_per_layer: int   # per token

    def bytes_per_token(self, n_layers: int, bytes_per_value: int = 2) -> int:
        return self.numbers_per_layer * n_layers * bytes_per_value


def layouts(n_heads: int, head_dim: int, n_groups: int, latent: int, rope_dim: int) -> list[Layout]:
    return [
        Layout("MHA", 2 * n_heads * head_dim),
        Layout(f"GQA, {n_groups} groups", 2 * n_groups * head_dim),
        Layout("MQA", 2 * head_dim),
        Layout("MLA", latent + rope_dim),
    ]


# DeepSeek-V2's shape (DeepSeek-AI 2024): 60 layers, 128 heads of 128, d_c = 512, rope part 64.
DEEPSEEK_V2 = {"n_layers": 60, "n_heads": 128, "head_dim": 128, "latent": 512, "rope_dim": 64}
