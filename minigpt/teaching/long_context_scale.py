"""Long context at scale: ring attention's traffic against its compute, sliding-window layers
interleaved with global ones, DeepSeek's native sparse attention, and a fixed state in hybrid
models (Mamba-2's SSD, gated DeltaNet), each counted.

Ring attention (Liu et al. 2023) gives each of c devices s/c tokens; in each of c − 1 rounds a
device attends its queries to the key/value block it holds while it passes that block on, so
the transfer hides behind the arithmetic when a block's attention takes longer than its
transfer (``parallelism.ring_kv_bytes_received`` counts the volume).

Native sparse attention (Yuan et al. 2025) lets each query read three branches: compressed
blocks (one summary every d tokens), the n selected blocks of l′ tokens, and a window of w
recent tokens: s/d + n·l′ + w tokens, the count behind the paper's decoding speed-ups.
"""

from __future__ import annotations

import torch

from minigpt.teaching import attention_variants, parallelism, state_space

# --- ring attention ------------------------------------------------------------------------------


def ring_round(seq: int, c: int, d_model: int, kv_width: int, flops_per_s: float,
               link_bytes_per_s: float, bytes_per_value: int = 2) -> tuple[float, float]:
    """Seconds of one ring round, per layer: attention of s/c queries on s/c keys (4·b²·d
    FLOPs: scores and the weighted sum), and sending one block of keys and values on."""
    block = seq / c
    compute = 4 * block * block * d_model / flops_per_s
    send = parallelism.ring_kv_bytes_received(seq, kv_width, c, bytes_per_value) / (c - 1)
    return compute, send / link_bytes_per_s


def min_block_for_overlap(d_model: int, kv_width: int, flops_per_s: float,
                          link_bytes_per_s: float, bytes_per_value: int = 2) -> float:
    """Tokens per device from which a round's attention outlasts its transfer:
    4·b²·d/F ≥ 2·b·kv·bytes/B, so b ≥ F·kv·bytes / (2·d·B)."""
    return flops_per_s * kv_width * bytes_per_value / (2 * d_model * link_bytes_per_s)


# --- local and global layers ----------------------------------------------------------------------


def interleaved_cache_share(context: int, window: int, local_per_global: int) -> float:
    """KV cache of a model whose layers run ``local_per_global`` sliding-window layers for each
    global one, as a share of the same model with every layer global."""
    local = attention_variants.cached_tokens(context, window)
    k = local_per_global
    return (k * local + context) / ((k + 1) * context)


# --- native sparse attention ----------------------------------------------------------------------

NSA = {"stride": 16, "selected": 16, "block": 64, "window": 512}  # the paper's settings


def nsa_tokens(context: int, stride: int = 16, selected: int = 16, block: int = 64,
               window: int = 512) -> int:
    """Keys a query reads in NSA: compressed summaries, selected blocks, the recent window."""
    return context // stride + selected * block + window


# --- a fixed state against a growing cache --------------------------------------------------------


def kv_numbers(context: int, n_kv_heads: int, head_dim: int) -> int:
    """Numbers one attention layer caches for a sequence: keys and values for every token."""
    return 2 * context * n_kv_heads * head_dim


def mamba2_state(d_model: int, expand: int = 2, state: int = 128) -> int:
    """Mamba-2 keeps ``state`` numbers per channel of its expand·d inner width (N = 128 in
    Dao & Gu 2024, eight times Mamba's 16): ``state_space.ssm_cost`` counts the same."""
    return state_space.ssm_cost(d_model, expand, state).state


def deltanet_state(n_heads: int, key_dim: int, value_dim: int) -> int:
    """Gated DeltaNet (Yang et al. 2024) keeps a key_dim × value_dim matrix per head."""
    return n_heads * key_dim * value_dim


def hybrid_cache_numbers(context: int, layers: int, attention_every: int, n_kv_heads: int,
                         head_dim: int, state_per_layer: int) -> int:
    """A stack where one layer in ``attention_every`` is attention and the rest keep a state."""
    attn = layers // attention_every
    return attn * kv_numbers(context, n_kv_heads, head_dim) + (layers - attn) * state_per_layer


# --- the same layer two ways: a recurrence and a masked matrix (SSD) -----------------------------


def ssd_recurrent(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor,
                  x: torch.Tensor) -> torch.Tensor:
    """h_t = a_t·h_{t−1} + b_t·x_t (h an N-vector, a_t a scalar decay), y_t = c_t·h_t."""
    h = torch.zeros(b.shape[1], dtype=torch.float64)
    out = []
    for t in range(len(x)):
        h = a[t] * h + b[t] * x[t]
        out.append(c[t] @ h)
    return torch.stack(out)


def ssd_matrix(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """The same map as one T×T lower-triangular matrix: M[i, j] = (c_i·b_j)·a_{j+1}···a_i, an
    attention matrix with a decay mask instead of a softmax (Mamba-2's state-space duality)."""
    cum = torch.cumsum(torch.log(a), 0)
    decay = torch.exp(cum[:, None] - cum[None, :])
    return torch.tril((c @ b.T) * decay)


# --- writing one key twice: linear attention adds, the delta rule replaces ------------------------


def recall_after_overwrite(beta: float = 1.0, alpha: float = 1.0) -> tuple[list[float], list[float]]:
    """Store value v1 under a unit key k, then v2 under the same key, and read with k: plain
    linear attention (S += v·kᵀ) returns v1 + v2; the gated delta rule
    S ← α·S·(I − β·k·kᵀ) + β·v·kᵀ returns v2 when α = β = 1."""
    k = torch.tensor([1.0, 0.0], dtype=torch.float64)
    v1, v2 = torch.tensor([1.0, 0.0], dtype=torch.float64), torch.tensor([0.0, 1.0],
                                                                          dtype=torch.float64)
    linear, delta = torch.zeros(2, 2, dtype=torch.float64), torch.zeros(2, 2, dtype=torch.float64)
    eye = torch.eye(2, dtype=torch.float64)
    for v in (v1, v2):
        linear = linear + torch.outer(v, k)
        delta = alpha * delta @ (eye - beta * torch.outer(k, k)) + beta * torch.outer(v, k)
    return (linear @ k).tolist(), (delta @ k).tolist()
